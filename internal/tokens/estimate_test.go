package tokens

import (
	"strings"
	"testing"
)

// A text within EstimatedBytes is counted whole; a longer one from its head,
// scaled by length: about what counting it whole gives, for a fraction of
// the work (a head cut inside a multi-byte rune is cut before it).
func TestEstimateTextForScalesALongText(t *testing.T) {
	short := strings.Repeat("lorem ipsum ", 100)
	n, _ := CountText(Cl100kBase, short)
	if e, err := EstimateTextFor("acme", Cl100kBase, short); err != nil || e != n {
		t.Fatalf("short text: estimate %d (%v), count %d", e, err, n)
	}
	long := strings.Repeat("é lorem ipsum ", 4000) // ~60 KB, the head cut mid-rune
	whole, _ := CountText(Cl100kBase, long)
	e, err := EstimateTextFor("acme", Cl100kBase, long)
	if err != nil || e < whole*9/10 || e > whole*11/10 {
		t.Fatalf("long text: estimate %d (%v), whole count %d", e, err, whole)
	}
}
