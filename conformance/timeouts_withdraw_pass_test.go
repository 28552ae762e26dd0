package conformance_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// rerun is what passThenFail leaves: the environment, the rerun's report
// and its one result, and whether the gate still allows the target as a
// fallback (why not, when it does not).
type rerun struct {
	e   *env
	rep *conformance.Report
	r   conformance.Result
	ok  bool
	why string
}

// passThenFail runs triage on a target that passes, then reruns it with every
// suite case answered by step (the target's timeout cut to 300ms, so a hang
// ends).
func passThenFail(t *testing.T, step providers.Step) rerun {
	t.Helper()
	e := newEnv(t)
	ctx := context.Background()
	var failingNow atomic.Bool
	good := oracle(e.answers, nil)
	e.add("backup", func(i int, req *providers.Request) providers.Step {
		if failingNow.Load() {
			return step
		}
		return good(i, req)
	})
	opt := conformance.Options{Providers: []string{"backup"}, PromptNames: []string{"triage"}}
	if r := result(t, e.run(t, opt), "backup", "triage"); !r.Passed {
		t.Fatalf("precondition: %+v", r)
	}
	triage := mustPrompt(t, e, "triage")
	g := conformance.NewGate(e.st, conformance.GateFallbacks, time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(id string) string { return e.targets[id].Model }))
	if ok, why := g.Allow(ctx, "backup", triage, store.RoleFailover); !ok {
		t.Fatalf("precondition: %s", why)
	}
	failingNow.Store(true)
	e.targets["backup"].Timeout = 300 * time.Millisecond
	rep := e.run(t, opt)
	ok, why := g.Allow(ctx, "backup", triage, store.RoleFailover)
	return rerun{e: e, rep: rep, r: result(t, rep, "backup", "triage"), ok: ok, why: why}
}

// A target that passed and now times out (before any byte or mid-stream),
// stalls, or answers 500 on every case fails the rerun: a production job
// would meet the same, so the failure is recorded and withdraws the pass at
// once (it was inconclusive, not recorded, and the pass held until max_age).
func TestTimeoutsStallsAndServerErrorsWithdrawAPass(t *testing.T) {
	for name, step := range map[string]providers.Step{
		"timeout before any byte": {Hang: true},
		"stream timeout":          {Hang: true, HangAfterBytes: true, Output: validTriage},
		"stalled stream":          {StreamStall: true, Output: validTriage},
		"server error 500":        {Status: 500},
		"gateway timeout 504":     {Status: 504},
		"request timeout 408":     {Status: 408},
	} {
		t.Run(name, func(t *testing.T) {
			x := passThenFail(t, step)
			r, ok, why := x.r, x.ok, x.why
			if r.Passed || r.Inconclusive || r.Recorded == nil || !*r.Recorded {
				t.Fatalf("passed %v, inconclusive %v, recorded %v: want a recorded failure", r.Passed, r.Inconclusive, r.Recorded)
			}
			for _, c := range r.Cases {
				if c.Transient {
					t.Fatalf("case %s marked transient: %+v", c.Name, c)
				}
			}
			if ok {
				t.Fatalf("the gate still allows the target after a recorded failure (%s)", why)
			}
		})
	}
}

// Only the provider errors that say "not now" leave a pass standing: rate
// limited, unavailable or overloaded, a refused or reset connection.
func TestNotNowProviderErrorsKeepAPass(t *testing.T) {
	for name, step := range map[string]providers.Step{
		"rate limited 429":   {Status: 429},
		"unavailable 503":    {Status: 503},
		"overloaded 529":     {Status: 529},
		"connection refused": {Error: &providers.Error{Kind: providers.KindConnRefused, Message: "connection refused"}},
		"connection reset":   {Error: &providers.Error{Kind: providers.KindConnReset, Message: "connection reset by peer"}},
	} {
		t.Run(name, func(t *testing.T) {
			x := passThenFail(t, step)
			r, ok, why := x.r, x.ok, x.why
			if r.Passed || !r.Inconclusive || r.Recorded != nil {
				t.Fatalf("passed %v, inconclusive %v, recorded %v: want inconclusive, not recorded", r.Passed, r.Inconclusive, r.Recorded)
			}
			if !ok {
				t.Fatalf("a transient error withdrew the pass: %s", why)
			}
		})
	}
}
