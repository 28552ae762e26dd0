package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// RFC 6901 writes an array index in decimal without a sign or a leading
// zero: CheckPath refuses "01", "+1" and "-0" where the schema says an array
// is, naming the pointer and the index to write; where an object may be
// (a key "01"), it accepts. ArrayIndex reads only the RFC's form.
func TestCheckPathRefusesALooseArrayIndex(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{
		"lines":{"type":"array","items":{"type":"object","properties":{"amount":{"type":"number"}}}},
		"meta":{"type":"object","additionalProperties":true}}}`)
	val, err := contract.NewValidator(schema, "", contract.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"/lines/01/amount": `path "/lines/01/amount": "01" is not an array index: a JSON pointer (RFC 6901) writes one in decimal, without a sign or a leading zero; write /lines/1/amount`,
		"/lines/+1/amount": `path "/lines/+1/amount": "+1" is not an array index`,
		"/lines/-0":        `write /lines/0`,
		"/lines/00":        `write /lines/0`,
	} {
		if err := val.CheckPath(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckPath(%s) = %v, want an error saying %q", p, err, want)
		}
	}
	for _, p := range []string{"/lines/1/amount", "/lines/10", "/meta/01"} {
		if err := val.CheckPath(p); err != nil {
			t.Errorf("CheckPath(%s) = %v, want nil", p, err)
		}
	}
	for seg, want := range map[string]int{"0": 0, "7": 7, "10": 10} {
		if i, ok := contract.ArrayIndex(seg); !ok || i != want {
			t.Errorf("ArrayIndex(%q) = %d, %v; want %d", seg, i, ok, want)
		}
	}
	for _, seg := range []string{"", "01", "00", "+1", "-0", "-1", " 1", "1 ", "1e0", "99999999999999999999"} {
		if i, ok := contract.ArrayIndex(seg); ok {
			t.Errorf("ArrayIndex(%q) = %d, true; want not an index", seg, i)
		}
	}
}
