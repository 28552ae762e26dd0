package spelling

import "testing"

// Edits counts an adjacent swap as one edit, and is Distance otherwise.
func TestEdits(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"requried", "required", 1}, {"maxlenght", "maxlength", 1},
		{"tpye", "type", 1}, {"additonalproperties", "additionalproperties", 1}, {"kitten", "sitting", 3},
		{"ab", "ba", 1}, {"abc", "ca", 3}, {"same", "same", 0},
	} {
		if got := Edits(c.a, c.b); got != c.want {
			t.Errorf("Edits(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
