package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// An object with a key twice was judged on the last value (as ParseJSON keeps
// it) and returned as written, both keys in it: a reader that keeps the first
// value, or refuses the object, saw a value that never passed. It is refused,
// as the provider's, like json.syntax.
func TestValidateRefusesDuplicateKeys(t *testing.T) {
	triage := loadExample(t, "triage")
	ranged, err := contract.NewValidator([]byte(`{"type":"object","properties":{"n":{"type":"number"},"o":{"type":"object"}}}`), "",
		contract.Rules{Ranges: map[string]contract.Range{"/n": {Max: new(10.0)}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		val       *contract.Validator
		out, path string
	}{
		{triage, strings.Replace(triageOK, `"priority":"high"`, `"priority":"bogus","priority":"low"`, 1), "$"},
		{triage, strings.Replace(triageOK, `"priority":"high"`, `"priority":"bogus","\u0070riority":"low"`, 1), "$"},
		{triage, "```json\n" + strings.Replace(triageOK, `"needs_human":true`, `"needs_human":true,"needs_human":false`, 1) + "\n```", "$"},
		{ranged, `{"n":1e9,"n":1}`, "$"},
		{ranged, `{"n":1,"o":{"a/b":{"x":1,"x":1}}}`, "/o/a~1b"},
	} {
		_, vs := tc.val.Validate(tc.out)
		if len(vs) != 1 || vs[0].Rule != "json.duplicate_key" || vs[0].Path != tc.path || !strings.Contains(vs[0].Message, "twice") {
			t.Errorf("%s: %v, want one json.duplicate_key at %s", tc.out, vs, tc.path)
		}
	}
	// The same key in two objects is not a duplicate.
	if _, vs := ranged.Validate(`{"n":1,"o":{"n":1,"o":{"n":2}}}`); vs != nil {
		t.Errorf("nested same keys: %v", vs)
	}
}

// Validate checks every answer on the hot path: the check for repeated keys
// allocates nothing for the shipped prompts' answers.
func TestDuplicateKeyCheckDoesNotAllocate(t *testing.T) {
	for _, out := range []string{triageOK, invoiceOK} {
		b := []byte(out)
		if n := testing.AllocsPerRun(100, func() {
			if v := contract.DuplicateKey(b); v != nil {
				t.Fatal(v)
			}
		}); n != 0 {
			t.Errorf("DuplicateKey allocates %v times for %.40q…", n, out)
		}
	}
}
