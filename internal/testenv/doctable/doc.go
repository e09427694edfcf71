// Package doctable reads the tables of the project's Markdown documents,
// so that tests can check a documented table against the code: the names
// it defines (annotations, condition reasons, event reasons, metrics,
// flags) and what it gives each (a reason's status, an event's type, a
// flag's default). A name added to the code without a row, a row left
// behind by a removed name, or a cell the code contradicts fails a test
// instead of misleading a reader.
package doctable
