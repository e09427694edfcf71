// Package doctable reads the tables of the project's Markdown documents,
// so that tests can check a documented table against the names the code
// defines (annotations, condition reasons, event reasons, metrics): a name
// added to the code without a row, or a row left behind by a removed name,
// fails a test instead of misleading a reader.
package doctable
