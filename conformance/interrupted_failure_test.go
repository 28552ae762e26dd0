package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// interruptedEnv has one provider, backup, whose first triage run passes;
// once regressed is set, it answers case 0 with failCase0 (the reference when
// nil) and the interruption (cancel, Ctrl-C) comes while case 1 is in
// flight. The cases of one provider run one after another, so case 0 has
// finished by then.
type interruptedEnv struct {
	*env
	regressed bool
	failCase0 *providers.Step
	cancel    context.CancelFunc
}

func newInterruptedEnv(t *testing.T) *interruptedEnv {
	t.Helper()
	ie := &interruptedEnv{env: newEnv(t)}
	ref := oracle(ie.answers, nil)
	ie.add("backup", func(n int, req *providers.Request) providers.Step {
		ans, ok := ie.answers.lookup(req.Messages)
		if !ie.regressed || !ok {
			return ref(n, req)
		}
		if ans.index == 0 && ie.failCase0 != nil {
			return *ie.failCase0
		}
		if ans.index == 1 {
			ie.cancel() // Ctrl-C during the second case
		}
		return ref(n, req)
	})
	if rep := ie.run(t, conformance.Options{PromptNames: []string{"triage"}}); !rep.Passed {
		t.Fatal("first run did not pass")
	}
	return ie
}

// rerun is the regressed run, interrupted during case 1.
func (ie *interruptedEnv) rerun(t *testing.T) *conformance.Report {
	t.Helper()
	ie.regressed = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ie.cancel = cancel
	rep, err := conformance.Run(ctx, conformance.Options{Store: ie.st, TargetDigests: testTargetDigests, Targets: ie.targets, Prompts: ie.prompts, Suites: ie.suites,
		PromptNames: []string{"triage"}, RouterVersion: "test"})
	if err == nil || rep == nil || !rep.Interrupted || rep.Passed {
		t.Fatalf("want an interrupted run that did not pass, got err=%v report=%+v", err, rep)
	}
	return rep
}

func (ie *interruptedEnv) latest(t *testing.T) store.ConformanceRun {
	t.Helper()
	runs, err := ie.st.LatestConformanceRuns(context.Background(), store.ConformanceFilter{Provider: "backup", Prompt: "triage", WithCases: true, MaxAge: time.Hour})
	if err != nil || len(runs) != 1 {
		t.Fatalf("latest runs: %v, %d", err, len(runs))
	}
	return runs[0]
}

// A run interrupted part-way through a pair after one of its cases failed
// records the pair as failed, with the cases that finished: the provider's
// previous pass no longer admits it (the gate would otherwise keep a
// provider that just regressed for up to max_age, and the evidence the run
// paid for would be lost). The report lists it as FAIL, interrupted after
// 1 of n cases. Found by review.
func TestInterruptedPairWithKnownFailureWithdrawsPass(t *testing.T) {
	ie := newInterruptedEnv(t)
	ie.failCase0 = &providers.Step{Output: `{"category":"nonsense"}`} // fails the contract
	rep := ie.rerun(t)

	p, err := ie.prompts.Get("triage", "")
	if err != nil {
		t.Fatal(err)
	}
	g := conformance.NewGate(ie.st, conformance.GateFallbacks, time.Hour, conformance.CacheFor(0),
		conformance.TargetModels(func(string) string { return "backup-model" }))
	if ok, _ := g.Allow(context.Background(), "backup", p, store.RoleFailover); ok {
		t.Fatal("gate still admits backup on triage although the run saw case 0 fail; the failing pair was not recorded")
	}

	n := len(ie.suites["triage"].Cases)
	if len(rep.Results) != 1 {
		t.Fatalf("%d results, want the interrupted failing pair", len(rep.Results))
	}
	res := rep.Results[0]
	if res.Passed || !res.Interrupted || res.CasesTotal != n || res.CasesPassed != 0 || len(res.Cases) != 1 ||
		res.Cases[0].Passed || res.Cases[0].Stage != conformance.StageContract || res.Recorded == nil || !*res.Recorded {
		t.Fatalf("result: %+v", res)
	}
	run := ie.latest(t)
	var cases []conformance.CaseResult
	if err := json.Unmarshal(run.Cases, &cases); err != nil {
		t.Fatal(err)
	}
	if run.ID != res.RunID || run.Passed || run.CasesTotal != n || run.CasesPassed != 0 || len(cases) != 1 || cases[0].Passed {
		t.Fatalf("stored run %+v with cases %+v; want the failed pair with only case 0", run, cases)
	}

	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("FAIL (interrupted after 1 of %d cases)\n", n),
		"interrupted: 0 of 1 planned results finished, and 1 more stopped early after a case failed (recorded as failed); the rest were not run or recorded",
		"1 of the 1 results above failed: those providers are not eligible for failover or hedging",
	} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Results []struct {
			Interrupted bool `json:"interrupted"`
		} `json:"results"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || len(got.Results) != 1 || !got.Results[0].Interrupted {
		t.Fatalf("JSON (%v):\n%s", err, js.String())
	}
}

// A pair interrupted before any of its cases failed records nothing: an
// unfinished run never records a pass, and the previous run stays the
// latest.
func TestInterruptedPairWithoutFailureRecordsNothing(t *testing.T) {
	ie := newInterruptedEnv(t)
	before := ie.latest(t)
	rep := ie.rerun(t)
	if len(rep.Results) != 0 {
		t.Fatalf("results %+v; want none", rep.Results)
	}
	if after := ie.latest(t); after.ID != before.ID {
		t.Fatalf("latest run changed from %d to %d (passed=%v) after an interrupted run", before.ID, after.ID, after.Passed)
	}
}

// The first Ctrl-C arriving after the last case finished, while its result
// is being recorded (which the interruption does not stop), leaves a run
// that finished: it is not reported interrupted, and passes when everything
// passed. Found by review.
func TestInterruptAfterLastCaseIsAFinishedRun(t *testing.T) {
	e := newEnv(t)
	e.add("backup", oracle(e.answers, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := conformance.Run(ctx, conformance.Options{Store: e.st, TargetDigests: testTargetDigests, Targets: e.targets, Prompts: e.prompts, Suites: e.suites,
		PromptNames: []string{"triage"}, RouterVersion: "test",
		Progress: func(pr conformance.Progress) {
			if pr.Done == pr.Total {
				cancel() // after the last case, before its result is recorded
			}
		}})
	if err != nil || rep == nil || rep.Interrupted || !rep.Passed || len(rep.Results) != 1 || !*rep.Results[0].Recorded {
		t.Fatalf("err %v, report %+v; want a finished, recorded, passing run", err, rep)
	}
}
