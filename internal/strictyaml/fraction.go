package strictyaml

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// maxDepth bounds the walk of fraction; yaml.v3 refuses deeper documents.
const maxDepth = 10000

var (
	unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	durationType    = reflect.TypeOf(time.Duration(0))
)

// fraction is the first number under n with a fractional part (2.9, 1e-3)
// that decoding n into a value of type t would store in an integer, which
// yaml.v3 does by truncating it; nil when there is none. Types that decode
// themselves (yaml.Unmarshaler) and untyped values (any) are left alone.
func fraction(n *yaml.Node, t reflect.Type, depth int) *yaml.Node {
	if n == nil || depth > maxDepth {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		return fraction(n.Alias, t, depth+1)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if t != durationType && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" && !integral(n.Value) {
			return n
		}
	case reflect.Slice, reflect.Array:
		if n.Kind == yaml.SequenceNode {
			for _, c := range n.Content {
				if f := fraction(c, t.Elem(), depth+1); f != nil {
					return f
				}
			}
		}
	case reflect.Map:
		if n.Kind == yaml.MappingNode {
			for i := 1; i < len(n.Content); i += 2 {
				if f := fraction(n.Content[i], t.Elem(), depth+1); f != nil {
					return f
				}
			}
		}
	case reflect.Struct:
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if ft, ok := fieldType(t, n.Content[i].Value); ok {
					if f := fraction(n.Content[i+1], ft, depth+1); f != nil {
						return f
					}
				}
			}
		}
	}
	return nil
}

// integral reports whether a YAML float's text is a whole number
// (yaml.v3 accepts 1e3 or 2.0 for an integer, and so does Decode).
func integral(text string) bool {
	x, err := strconv.ParseFloat(strings.ReplaceAll(text, "_", ""), 64)
	return err == nil && x == math.Trunc(x)
}

// fieldType is the type of the field of struct t that key k sets, as
// yaml.v3 names fields: the tag's name, else the lower-cased field name;
// inline structs lend their fields.
func fieldType(t reflect.Type, k string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if it, ok := fieldType(ft, k); ok {
					return it, true
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == k {
			return f.Type, true
		}
	}
	return nil, false
}
