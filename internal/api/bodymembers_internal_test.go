package api

import "testing"

// inexactMember walks every top-level member, whatever the values before it
// hold (strings with quotes, escapes and brackets, nested values, scalars),
// and reads an escaped name as encoding/json does.
func TestInexactMemberWalksEveryMember(t *testing.T) {
	type body struct {
		A string          `json:"a"`
		B any             `json:"b"`
		C []byte          `json:"c_c"`
		D int             `json:"-"`
		E bool            `json:""`
		F map[string]bool `json:"f,omitempty"`
	}
	for _, tc := range []struct{ text, name, want string }{
		{`{"a":"x","b":1,"c_c":null,"E":true,"f":{}}`, "", ""},
		{` { "a" : "x\"}]{[" , "b" : [1,{"A":"}"},[]], "c_c":"", "f":{"B":[]} } `, "", ""},
		{`{"b":-1.5e3,"a":"x","B":2}`, "B", "b"},
		{`{"b":true,"b":false,"C_c":null}`, "C_c", "c_c"},
		{`{"b":{"a":{"A":1}},"\u0061":"x","e":1}`, "e", "E"},
		{`{"b":null,"F":{}}`, "F", "f"},
		{`{"\"":1}`, `"`, ""},
		{`{}`, "", ""},
		{`null`, "", ""},
		{`[{"A":1}]`, "", ""},
	} {
		name, want, ok := inexactMember([]byte(tc.text), &body{})
		if ok != (tc.name == "") || name != tc.name || want != tc.want {
			t.Errorf("%s: %q %q %v, want %q %q", tc.text, name, want, ok, tc.name, tc.want)
		}
	}
}
