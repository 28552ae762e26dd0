package webhook

import (
	"testing"
	"time"
)

// A later Retry-After may lengthen an owner's pause, never shorten it; the
// jitter added to a held delivery's wait stays within an eighth of it; an
// ended pause is forgotten.
func TestOwnerPauseOnlyLengthensAndEnds(t *testing.T) {
	var p ownerPauses
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.pause("acme", t0, time.Hour)
	p.pause("acme", t0, time.Minute) // a shorter answer of a try in flight beside it
	for range 100 {
		if w := p.held("acme", t0); w < time.Hour || w > time.Hour+ownerBusyMax {
			t.Fatalf("held %s, want the hour's pause plus at most %s", w, ownerBusyMax)
		}
	}
	if w := p.held("globex", t0); w != 0 {
		t.Fatalf("another owner held %s", w)
	}
	p.pause("acme", t0, 2*time.Hour)
	if w := p.held("acme", t0.Add(90*time.Minute)); w < 30*time.Minute || w > 30*time.Minute+30*time.Minute/8 {
		t.Fatalf("held %s after a longer pause, want 30m plus at most an eighth", w)
	}
	if w := p.held("acme", t0.Add(2*time.Hour)); w != 0 {
		t.Fatalf("held %s at the pause's end", w)
	}
	if _, ok := p.until["acme"]; ok {
		t.Fatal("an ended pause is still kept")
	}
}
