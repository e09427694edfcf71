package chart_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/templatedrift/template-drift-controller/internal/testenv/doctable"
)

// schemaNode is what schemaKeys reads of values.schema.json.
type schemaNode struct {
	Properties map[string]schemaNode `json:"properties"`
}

// schemaKeys returns the dotted path of every key values.schema.json
// defines, objects and their properties alike.
func schemaKeys(prefix string, n schemaNode) []string {
	var out []string
	for name, child := range n.Properties {
		key := prefix + name
		out = append(out, key)
		out = append(out, schemaKeys(key+".", child)...)
	}
	return out
}

// TestReadmeValuesTable: the chart README's Values table documents every
// value: each key of the schema that has no properties of its own (a
// setting, a map or a list) is a row, or lies below one (`resources` covers
// `resources.limits`), and every row is a key of the schema.
func TestReadmeValuesTable(t *testing.T) {
	g := NewWithT(t)
	data, err := os.ReadFile(repoPath(t, "charts", "template-drift-controller", "values.schema.json"))
	g.Expect(err).NotTo(HaveOccurred())
	var schema schemaNode
	g.Expect(json.Unmarshal(data, &schema)).To(Succeed())
	keys := schemaKeys("", schema)

	readme, err := os.ReadFile(repoPath(t, "charts", "template-drift-controller", "README.md"))
	g.Expect(err).NotTo(HaveOccurred())
	rows, err := doctable.Rows(readme, "Values", "Key")
	g.Expect(err).NotTo(HaveOccurred())
	var documented []string
	for _, r := range rows {
		documented = append(documented, strings.Trim(r["Key"], "`"))
	}
	g.Expect(documented).NotTo(BeEmpty())
	for _, k := range documented {
		g.Expect(keys).To(ContainElement(k), "the README documents %s, which the schema does not have", k)
	}
	covered := func(key string) bool {
		return slices.ContainsFunc(documented, func(d string) bool { return key == d || strings.HasPrefix(key, d+".") })
	}
	var missing []string
	for _, k := range keys {
		leaf := len(propertiesAt(schema, k)) == 0
		if leaf && !covered(k) {
			missing = append(missing, k)
		}
	}
	slices.Sort(missing)
	g.Expect(missing).To(BeEmpty(), "values the README's Values table does not document")
}

// propertiesAt returns the properties of the schema's key at a dotted path.
func propertiesAt(n schemaNode, key string) map[string]schemaNode {
	for name := range strings.SplitSeq(key, ".") {
		n = n.Properties[name]
	}
	return n.Properties
}
