package diff

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
)

// scalarEqual compares two leaf values. Numbers compare by value whatever
// their Go type, because the manifest is decoded from YAML (1 is an int64)
// while the live object comes from JSON (and may hold 1.0 as a float64).
func scalarEqual(a, b any) bool {
	if isNumber(a) || isNumber(b) {
		return numberEqual(a, b)
	}
	switch av := a.(type) {
	case nil:
		return b == nil
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	}
	return reflect.DeepEqual(a, b)
}

func isNumber(v any) bool {
	switch v.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64,
		float32, float64, json.Number:
		return true
	}
	return false
}

// numberEqual compares two numbers exactly: as int64 when both are integers,
// as float64 when both are floats, and as big rationals otherwise.
func numberEqual(a, b any) bool {
	if !isNumber(a) || !isNumber(b) {
		return false
	}
	ai, aok := asInt64(a)
	bi, bok := asInt64(b)
	if aok && bok {
		return ai == bi
	}
	af, aIsFloat := asFloat(a)
	bf, bIsFloat := asFloat(b)
	if aIsFloat && bIsFloat {
		return af == bf
	}
	ar, br := asRat(a), asRat(b)
	if ar == nil || br == nil {
		// NaN or ±Inf on one side: only float comparison is meaningful.
		return aIsFloat && bIsFloat && af == bf
	}
	return ar.Cmp(br) == 0
}

func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint:
		return int64(n), n <= math.MaxInt64
	case uint64:
		return int64(n), n <= math.MaxInt64
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	}
	return 0, false
}

// asRat converts a number to an exact rational; nil for NaN, ±Inf or an
// unparsable json.Number.
func asRat(v any) *big.Rat {
	if i, ok := asInt64(v); ok {
		return new(big.Rat).SetInt64(i)
	}
	switch n := v.(type) {
	case uint:
		return new(big.Rat).SetInt(new(big.Int).SetUint64(uint64(n)))
	case uint64:
		return new(big.Rat).SetInt(new(big.Int).SetUint64(n))
	case float32, float64:
		f, _ := asFloat(n)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return new(big.Rat).SetFloat64(f)
	case json.Number:
		r, ok := new(big.Rat).SetString(n.String())
		if !ok {
			return nil
		}
		return r
	}
	return nil
}

// needsCleaning reports whether v holds a null map member or an ignored list
// element, i.e. whether desiredValue/liveValue must copy it.
func needsCleaning(v any, nullMembers bool) bool {
	switch c := v.(type) {
	case ignored:
		return true
	case map[string]any:
		for _, cv := range c {
			if (nullMembers && cv == nil) || needsCleaning(cv, nullMembers) {
				return true
			}
		}
	case []any:
		for _, cv := range c {
			if needsCleaning(cv, nullMembers) {
				return true
			}
		}
	}
	return false
}

// clean copies v, restoring ignored list elements and, when dropNulls is set,
// dropping null map members (Kubernetes drops them, so writing them would not
// survive anyway). Ignored elements are restored before nulls are dropped, so
// the value written is the manifest's own.
func clean(v any, dropNulls bool) any {
	switch c := v.(type) {
	case ignored:
		return clean(c.orig, dropNulls)
	case map[string]any:
		out := make(map[string]any, len(c))
		for k, cv := range c {
			if dropNulls && cv == nil {
				continue
			}
			out[k] = clean(cv, dropNulls)
		}
		return out
	case []any:
		out := make([]any, len(c))
		for i, cv := range c {
			out[i] = clean(cv, dropNulls)
		}
		return out
	}
	return v
}

// desiredValue is the value a correction writes for desired value v: v without
// null map members and with ignored list elements restored. It returns v itself
// (no copy) when there is nothing to clean.
func desiredValue(v any) any {
	if !needsCleaning(v, true) {
		return v
	}
	return clean(v, true)
}

// liveValue is live value v as it is in the cluster (ignored list elements
// restored); v itself when there is nothing to restore.
func liveValue(v any) any {
	if !needsCleaning(v, false) {
		return v
	}
	return clean(v, false)
}
