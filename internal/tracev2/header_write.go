package tracev2

import (
	"bytes"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"

	"servesim/internal/strictyaml"
)

// EncodeHeader writes h as YAML the way our writers do: keys in the spec's
// order (the order of Header's fields), nested maps indented by 4 spaces,
// created_at double-quoted, absent optional keys left out. It writes x_ext
// when h.XExt is set: callers producing BLIS-loadable two-file output clear
// it (see CreateFiles). h is validated first.
func EncodeHeader(w io.Writer, h *Header) error {
	b, err := headerYAML(h)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write trace header: %w", err)
	}
	return nil
}

// headerYAML renders h to YAML bytes.
func headerYAML(h *Header) ([]byte, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	n, err := headerNode(h)
	if err != nil {
		return nil, err
	}
	return encodeNode(n)
}

func headerNode(h *Header) (*yaml.Node, error) {
	var n yaml.Node
	if err := n.Encode(h); err != nil {
		return nil, fmt.Errorf("encode trace header: %w", err)
	}
	if i := findKey(&n, "created_at"); i >= 0 {
		n.Content[i+1].Style = yaml.DoubleQuotedStyle
	}
	return &n, nil
}

func encodeNode(n *yaml.Node) ([]byte, error) {
	b, err := strictyaml.Encode(n, 4)
	if err != nil {
		return nil, fmt.Errorf("encode trace header: %w", err)
	}
	return b, nil
}

// trailerYAML is what a single-stream writer appends at the end: the keys of
// final that the header already written (first) lacks, nested maps key by
// key. A key whose value changed cannot be expressed in a trailer (readers
// reject a key present in both), so it is an error. nil means no trailer.
func trailerYAML(first, final *Header) ([]byte, error) {
	if err := final.Validate(); err != nil {
		return nil, err
	}
	a, err := headerNode(first)
	if err != nil {
		return nil, err
	}
	b, err := headerNode(final)
	if err != nil {
		return nil, err
	}
	diff, err := nodeDiff(a, b, "")
	if err != nil {
		return nil, err
	}
	if diff == nil {
		return nil, nil
	}
	return encodeNode(diff)
}

// nodeDiff returns the mapping of keys in b that are not in a (recursing into
// mappings present in both), nil when there are none.
func nodeDiff(a, b *yaml.Node, path string) (*yaml.Node, error) {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(a.Content); i += 2 {
		if findKey(b, a.Content[i].Value) < 0 {
			return nil, fmt.Errorf("trace trailer: key %s was written in the header and cannot be removed", joinPath(path, a.Content[i].Value))
		}
	}
	for i := 0; i+1 < len(b.Content); i += 2 {
		k, v := b.Content[i], b.Content[i+1]
		p := joinPath(path, k.Value)
		j := findKey(a, k.Value)
		if j < 0 {
			out.Content = append(out.Content, k, v)
			continue
		}
		av := a.Content[j+1]
		if av.Kind == yaml.MappingNode && v.Kind == yaml.MappingNode {
			sub, err := nodeDiff(av, v, p)
			if err != nil {
				return nil, err
			}
			if sub != nil {
				out.Content = append(out.Content, k, sub)
			}
			continue
		}
		ab, err := encodeNode(av)
		if err != nil {
			return nil, err
		}
		bb, err := encodeNode(v)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(ab, bb) {
			return nil, fmt.Errorf("trace trailer: key %s changed after the header was written; a single stream can only add keys at the end", p)
		}
	}
	if len(out.Content) == 0 {
		return nil, nil
	}
	return out, nil
}
