package doctable

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
)

// Constants returns the string constants declared in the Go file at path,
// by name: the names a page's tables must list (annotations, reasons),
// read from the source, so that a constant added to it is checked without
// anyone remembering the test. A constant is a string literal, another
// string constant of the file, or a concatenation of those with +, such as
// an event reason made of a prefix and a condition reason; others (typed
// from other packages, computed) are left out.
func Constants(path string) (map[string]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	exprs := map[string]ast.Expr{}
	var names []string
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i < len(vs.Values) {
					exprs[name.Name] = vs.Values[i]
					names = append(names, name.Name)
				}
			}
		}
	}
	e := evaluator{exprs: exprs, values: map[string]string{}, visiting: map[string]bool{}}
	out := map[string]string{}
	for _, name := range names {
		v, ok, err := e.constant(name)
		if err != nil {
			return nil, err
		}
		if ok {
			out[name] = v
		}
	}
	return out, nil
}

// evaluator folds the string constants of one file.
type evaluator struct {
	exprs    map[string]ast.Expr
	values   map[string]string
	visiting map[string]bool
}

// constant returns the value of the constant name; false when it is not a
// string constant Constants reads.
func (e *evaluator) constant(name string) (string, bool, error) {
	if v, ok := e.values[name]; ok {
		return v, true, nil
	}
	x, ok := e.exprs[name]
	if !ok {
		return "", false, nil
	}
	if e.visiting[name] {
		return "", false, fmt.Errorf("constant %s refers to itself", name)
	}
	e.visiting[name] = true
	defer delete(e.visiting, name)
	v, ok, err := e.eval(x)
	if ok && err == nil {
		e.values[name] = v
	}
	return v, ok, err
}

// eval returns the string value of x: a string literal, a constant of the
// file, or a sum of those.
func (e *evaluator) eval(x ast.Expr) (string, bool, error) {
	switch x := x.(type) {
	case *ast.BasicLit:
		if x.Kind != token.STRING {
			return "", false, nil
		}
		v, err := strconv.Unquote(x.Value)
		return v, err == nil, err
	case *ast.Ident:
		return e.constant(x.Name)
	case *ast.ParenExpr:
		return e.eval(x.X)
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return "", false, nil
		}
		l, ok, err := e.eval(x.X)
		if !ok || err != nil {
			return "", false, err
		}
		r, ok, err := e.eval(x.Y)
		if !ok || err != nil {
			return "", false, err
		}
		return l + r, true, nil
	}
	return "", false, nil
}
