package webhook

import (
	"testing"
	"time"
)

// A later Retry-After may lengthen an owner's pause, never shorten it; an
// ended pause is forgotten; the spread a Retry-After's wait gets stays within
// an eighth of it, at most ownerBusyMax.
func TestOwnerPauseOnlyLengthensAndEnds(t *testing.T) {
	var p ownerPauses
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.pause("acme", t0, time.Hour)
	p.pause("acme", t0, time.Minute) // a shorter answer of a try in flight beside it
	if until, held := p.held("acme", t0); !held || !until.Equal(t0.Add(time.Hour)) {
		t.Fatalf("held until %s (%t), want the hour's pause", until, held)
	}
	if _, held := p.held("globex", t0); held {
		t.Fatal("another owner held")
	}
	p.pause("acme", t0, 2*time.Hour)
	if until, held := p.held("acme", t0.Add(90*time.Minute)); !held || !until.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("held until %s (%t) after a longer pause, want its end", until, held)
	}
	if _, held := p.held("acme", t0.Add(2*time.Hour)); held {
		t.Fatal("held at the pause's end")
	}
	if _, ok := p.until["acme"]; ok {
		t.Fatal("an ended pause is still kept")
	}
	for range 100 {
		if w := spreadWait(time.Hour); w < time.Hour || w > time.Hour+ownerBusyMax {
			t.Fatalf("an hour spread to %s, want at most %s more", w, ownerBusyMax)
		}
		if w := spreadWait(30 * time.Minute); w < 30*time.Minute || w > 30*time.Minute+30*time.Minute/8 {
			t.Fatalf("30m spread to %s, want at most an eighth more", w)
		}
	}
}
