package race_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// signalLooker reports each lookup on looked, then answers with answer.
type signalLooker struct {
	*providers.Scripted
	looked chan string
	answer func(attemptID string) (*providers.Response, bool, error)
}

func (s *signalLooker) Lookup(_ context.Context, attemptID string) (*providers.Response, bool, error) {
	s.looked <- attemptID
	return s.answer(attemptID)
}

// Attempts whose lookups keep failing (here a provider whose lookup endpoint
// is broken) are the oldest unknown attempts and fill a whole batch: the
// recovery loop must still reconcile the others, not list the same failing
// ones at every pass forever.
func TestReconcileFailingLookupsDoNotStarveOthers(t *testing.T) {
	db := testdb.New(t, store.Options{})
	rb := racetest.New(t, racetest.Options{DB: db, Providers: []racetest.Provider{{Name: "unused", Respond: racetest.OK(validTriage)}}})
	prompts, err := prompt.LoadDir(racetest.PromptsDir())
	if err != nil {
		t.Fatal(err)
	}
	brokenLooked := make(chan string, 100)
	goodLooked := make(chan string, 100)
	broken := &signalLooker{
		Scripted: providers.NewScripted(providers.ScriptedConfig{Name: "broken", Model: "m", Respond: racetest.OK(validTriage)}),
		looked:   brokenLooked,
		answer: func(string) (*providers.Response, bool, error) {
			return nil, false, providers.NewError("broken", providers.KindServerError, "lookup endpoint returns 500")
		},
	}
	good := &signalLooker{
		Scripted: providers.NewScripted(providers.ScriptedConfig{Name: "good", Model: "m", Respond: racetest.OK(validTriage)}),
		looked:   goodLooked,
		answer: func(string) (*providers.Response, bool, error) {
			return &providers.Response{Content: validTriage, Model: "m", ResponseID: "resp-good", Created: time.Now()}, true, nil
		},
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	r := race.New(race.Config{
		Store: db.Store, Listener: rb.Listener, Prompts: prompts, LeaseOwner: "recoverer", Lease: 30 * time.Second, Log: log,
		Targets: map[string]*race.Target{
			"broken": {Provider: broken, Model: "m", ContextWindow: 128000, Timeout: time.Minute},
			"good":   {Provider: good, Model: "m", ContextWindow: 128000, Timeout: time.Minute},
		},
		Routes:  map[string]*race.Route{"default": {Providers: []string{"broken", "good"}, MaxInflight: 2, MaxAttempts: 4}},
		Backoff: race.Backoff{Base: time.Millisecond, Cap: 5 * time.Millisecond}, ReconcileAfter: time.Nanosecond,
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.Stop(ctx)
	})

	ctx := context.Background()
	// unknown makes a job, settled unknown, whose one attempt on provider
	// became unknown minutesAgo minutes ago.
	unknown := func(i int, provider string, minutesAgo int) *store.Job {
		t.Helper()
		input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
		fp, _ := store.Fingerprint("triage", "", "", input)
		job, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: fmt.Sprint("starve-", i),
			Fingerprint: fp, PromptVersion: "3", Route: "default", Input: input, LeaseOwner: "dead", LeaseFor: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		a, err := db.Store.CreateAttempt(ctx, store.NewAttempt{JobID: job.ID, Provider: provider, Role: store.RolePrimary, LeaseOwner: "dead"})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Store.MarkAttemptRunning(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if err := db.Store.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptUnknown}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Store.SettleJob(ctx, job.ID, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Pool.Exec(ctx, `UPDATE attempts SET finished_at = now() - make_interval(mins => $2) WHERE id = $1`, a.ID, minutesAgo); err != nil {
			t.Fatal(err)
		}
		return job
	}
	const batch = 2
	for i := range batch {
		unknown(i, "broken", 10+i) // the oldest: listed first
	}
	goodJob := unknown(batch, "good", 1)

	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.RunRecovery(rctx, race.RecoveryConfig{Interval: time.Millisecond, Batch: batch})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})

	// Without the fix every pass lists the same two broken attempts, and the
	// good one is never looked up; with it, the second pass reaches it.
	brokenLookups := 0
	for waiting := true; waiting; {
		select {
		case <-goodLooked:
			waiting = false
		case <-brokenLooked:
			if brokenLookups++; brokenLookups >= 5*batch {
				t.Fatalf("%d lookups of the failing attempts and none of the other unknown attempt: reconciliation is starved", brokenLookups)
			}
		}
	}
	// Drain the broken lookups that go on, so that the looker never blocks.
	go func() {
		for {
			select {
			case <-brokenLooked:
			case <-goodLooked:
			case <-done:
				return
			}
		}
	}()
	changed, unsubscribe := rb.Listener.Subscribe(goodJob.ID)
	defer unsubscribe()
	for {
		j, err := db.Store.GetJobAny(ctx, goodJob.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.State == store.JobSucceeded {
			break
		}
		if store.IsTerminal(j.State) {
			t.Fatalf("good job %s, want succeeded from its reconciled attempt", j.State)
		}
		select {
		case <-changed:
		case <-time.After(30 * time.Second):
			t.Fatal("the reconciled job did not succeed")
		}
	}
}
