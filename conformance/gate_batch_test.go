package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// AllowModels (a plan's questions to the gate, race.BatchGate) starts the
// reads of all its asks before it waits for any: with conformance_runs
// locked, both reads of a plan are in flight together, each failed read
// refuses its ask (fail closed), an ask the gate does not judge (the
// primary, under fallbacks) reads nothing, and two asks of one standing
// share one read. Once the standings are cached, the same asks read nothing.
func TestGateAllowModelsReadsTogether(t *testing.T) {
	fx := newStallFixture(t, time.Hour)
	release := fx.lockRuns()
	other := &prompt.Prompt{Name: "invoice", Version: "2", Model: "m"}
	asks := []race.GateAsk{
		{Provider: "primary", Prompt: fx.p, Role: store.RolePrimary},
		{Provider: "fb", Prompt: fx.p, Role: store.RoleFailover},
		{Provider: "fb", Prompt: other, Role: store.RoleFailover},
		{Provider: "fb", Model: "m", Prompt: fx.p, Role: store.RoleHedge},
	}
	res := make(chan []race.GateAnswer, 1)
	go func() { res <- fx.g.AllowModels(context.Background(), asks) }()
	var fails []context.CancelFunc
	for len(fails) < 2 {
		select {
		case fail := <-fx.reads:
			fails = append(fails, fail)
		case got := <-res:
			t.Fatalf("AllowModels answered %+v after %d reads, while the table is locked: its reads did not run together", got, len(fails))
		}
	}
	for _, fail := range fails {
		fail()
	}
	got := <-res
	if !got[0].OK {
		t.Errorf("the primary under the default gate: refused: %s", got[0].Reason)
	}
	for i, a := range got[1:] {
		if a.OK || !strings.HasPrefix(a.Reason, "cannot read conformance results for ") {
			t.Errorf("ask %d, its read failed: %+v, want a refusal saying the results cannot be read", i+1, a)
		}
	}
	if extra := fx.readsSince(); extra != 0 {
		t.Errorf("%d reads for 2 standings", 2+extra)
	}

	release()
	fx.clock.Add(int64(failureCacheFor))
	if got := fx.g.AllowModels(context.Background(), asks[:2]); !got[0].OK || !got[1].OK {
		t.Fatalf("after the lock and the failure window: %+v, want both admitted", got)
	}
	if reads := fx.readsSince(); reads != 1 {
		t.Fatalf("after the failure window: %d reads, want 1", reads)
	}
	if got := fx.g.AllowModels(context.Background(), asks[:2]); !got[0].OK || !got[1].OK || fx.readsSince() != 0 {
		t.Fatalf("with the standing cached: %+v, want both admitted without a read", got)
	}
}
