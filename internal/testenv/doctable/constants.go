package doctable

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
)

// Constants returns the string constants declared in the Go file at path,
// by name: the names a page's tables must list (annotations, reasons),
// read from the source, so that a constant added to it is checked without
// anyone remembering the test.
func Constants(path string) (map[string]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					return nil, err
				}
				out[name.Name] = v
			}
		}
	}
	return out, nil
}
