package prompt_test

import "testing"

// len counted a string's bytes while slice cuts by characters, though
// slice's indices may come from len: {{ slice .q (len .p) }} over "ééabc"
// past "éé" rendered "c". len counts a string's characters now, as slice
// and the input schema's maxLength do; an array's elements and an object's
// keys as before.
func TestLenCountsCharacters(t *testing.T) {
	for _, tc := range []struct{ content, input, want string }{
		{`Rest: {{ slice .q (len .p) }}`, `{"q":"ééabc","p":"éé"}`, "Rest: abc"},
		{`Len: {{ len .q }} {{ .q | len }}`, `{"q":"héllo 日本 🙂"}`, "Len: 10 10"},
		{`Len: {{ len .q }}`, `{"q":"","tags":["é","b"]}`, "Len: 0"},
		{`Len: {{ len .tags }} {{ len . }}`, `{"q":"x","tags":["éé","b"]}`, "Len: 2 2"},
	} {
		got, err := renderOne(t, tc.content, tc.input)
		if err != nil || got != tc.want {
			t.Errorf("%s over %s = %q, %v; want %q", tc.content, tc.input, got, err, tc.want)
		}
	}
}
