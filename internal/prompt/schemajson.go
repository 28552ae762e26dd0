package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/routerhq/router/internal/jsontext"
)

// utf8BOM is the byte-order mark some editors put at the start of a file.
// JSON forbids it and the schema compiler stops at it ("invalid character
// 'ï'"), so schema files are read without it, as prompt.yaml is.
var utf8BOM = []byte("\xef\xbb\xbf")

// parseSchemaJSON checks that b (a schema file's bytes, BOM removed) is one
// JSON value and returns it as an ordered tree. A syntax error starts with its
// line and column (encoding/json gives only a byte offset, and the schema compiler
// not even that), with a hint for the usual trailing comma. An object that
// names a key twice is a *duplicateKeyError.
func parseSchemaJSON(b []byte) (*jnode, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		var se *json.SyntaxError
		if !errors.As(err, &se) {
			return nil, err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil, errors.New("the file is empty; write a JSON Schema object such as {\"type\": \"object\"}")
		}
		at := int(se.Offset) - 1 // the byte the decoder stopped at
		if at < 0 || at >= len(b) || se.Error() == "unexpected end of JSON input" {
			at = len(b) // after the last byte
		}
		line, col := position(b, at)
		msg := fmt.Sprintf("line %d, column %d: %v", line, col, err)
		if prev := lastNonSpace(b[:min(at, len(b))]); prev == ',' && at < len(b) && (b[at] == '}' || b[at] == ']') {
			msg += " (a trailing comma: JSON allows none before } or ])"
		}
		return nil, errors.New(msg)
	}
	if dup := jsontext.DuplicateKey(b); dup != nil {
		line, col := position(b, dup.Offset)
		return nil, &duplicateKeyError{line: line, col: col, dup: dup}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return readNode(dec)
}

// duplicateKeyError is a schema file that names a key twice in one object.
// The router refuses such JSON everywhere else (outputs, request bodies,
// prompt.yaml): readers differ on which value it holds. Here the router
// would judge answers by the last value while a provider sent the text as
// written may be constrained by the first, so no answer might pass.
type duplicateKeyError struct {
	line, col int // of the second member's name
	dup       *jsontext.DuplicateKeyError
}

func (e *duplicateKeyError) Error() string {
	at := "the top-level object"
	if e.dup.Pointer != "" {
		at = "the object at JSON pointer " + e.dup.Pointer
	}
	return fmt.Sprintf("line %d, column %d: %s has the key %q twice; JSON readers differ on which value it holds "+
		"(the router would judge answers by the last, a provider may be constrained by the first): write it once", e.line, e.col, at, e.dup.Key)
}

// position gives the 1-based line and column (in characters) of byte at of b.
func position(b []byte, at int) (line, col int) {
	line, start := 1, 0
	for i := 0; i < at && i < len(b); i++ {
		if b[i] == '\n' {
			line, start = line+1, i+1
		}
	}
	return line, utf8.RuneCount(b[start:min(at, len(b))]) + 1
}

func lastNonSpace(b []byte) byte {
	t := bytes.TrimRight(b, " \t\r\n")
	if len(t) == 0 {
		return 0
	}
	return t[len(t)-1]
}

// jnode is a JSON value that keeps the order of object keys (a provider
// generates an object's keys in the order the schema lists them, so the
// schema sent to it keeps the file's order) and numbers as written.
type jnode struct {
	keys   []string // object: keys in order (a repeated key keeps its first place and last value, as encoding/json)
	vals   []*jnode // object: values, by key index
	items  []*jnode // array
	scalar any      // string, json.Number, bool or nil
	kind   byte     // 'o' object, 'a' array, 's' scalar
}

func readNode(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		n := &jnode{kind: 'o'}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			n.set(kt.(string), v)
		}
		_, err := dec.Token() // '}'
		return n, err
	case json.Delim('['):
		n := &jnode{kind: 'a', items: []*jnode{}}
		for dec.More() {
			v, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
		}
		_, err := dec.Token() // ']'
		return n, err
	}
	return &jnode{kind: 's', scalar: tok}, nil
}

// get returns an object's member, or nil.
func (n *jnode) get(key string) *jnode {
	if n == nil || n.kind != 'o' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// set replaces an object's member, or appends it.
func (n *jnode) set(key string, v *jnode) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

// str returns a string scalar's value.
func (n *jnode) str() (string, bool) {
	if n == nil || n.kind != 's' {
		return "", false
	}
	s, ok := n.scalar.(string)
	return s, ok
}

// marshal writes n as compact JSON, without HTML escaping.
func (n *jnode) marshal(w *bytes.Buffer) error {
	switch n.kind {
	case 'o':
		w.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := writeScalar(w, k); err != nil {
				return err
			}
			w.WriteByte(':')
			if err := n.vals[i].marshal(w); err != nil {
				return err
			}
		}
		w.WriteByte('}')
	case 'a':
		w.WriteByte('[')
		for i, v := range n.items {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := v.marshal(w); err != nil {
				return err
			}
		}
		w.WriteByte(']')
	default:
		return writeScalar(w, n.scalar)
	}
	return nil
}

func writeScalar(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return err
}

// clone copies n deeply.
func (n *jnode) clone() *jnode {
	c := &jnode{kind: n.kind, scalar: n.scalar}
	if n.kind == 'o' {
		c.keys = append([]string(nil), n.keys...)
		c.vals = make([]*jnode, len(n.vals))
		for i, v := range n.vals {
			c.vals[i] = v.clone()
		}
	}
	if n.kind == 'a' {
		c.items = make([]*jnode, len(n.items))
		for i, v := range n.items {
			c.items[i] = v.clone()
		}
	}
	return c
}
