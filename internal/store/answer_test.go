package store_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// Issue 11: the win of a job's only attempt returns the job exactly as reading
// it right after gives (so a waiter need not read it); a job with another
// attempt gets none.
func TestCompleteJobReturnsTheWholeJob(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	create := func(key string) *store.Job {
		nj := newJob(t, "acme", "triage", key, `{"k":"`+key+`"}`)
		nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Model: "m", Role: store.RolePrimary, Routing: json.RawMessage(`[]`)}, "r1"
		j, _, err := b.st.CreateJob(ctx, nj)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	j := create("whole")
	a := j.Attempts[0]
	won, got, err := b.st.CompleteJob(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion,
		Result: json.RawMessage(`{"b": [1, 2], "a": "x"}`), Usage: map[string]int{"prompt_tokens": 3}, LatencyMS: 7,
		ProviderResponseID: "resp-1", ResponseModel: "m-2026"})
	if err != nil || !won || got == nil {
		t.Fatalf("won=%v job=%v err=%v", won, got, err)
	}
	read, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, _ := json.Marshal(got)
	readJSON, _ := json.Marshal(read)
	if !reflect.DeepEqual(gotJSON, readJSON) {
		t.Fatalf("the win's job differs from the job read:\nwin:  %s\nread: %s", gotJSON, readJSON)
	}
	if string(got.WonResult) != `{"b": [1, 2], "a": "x"}` || read.WonResult != nil {
		t.Fatalf("WonResult: the win's job %q (want the offered bytes), the job read %q (want none)", got.WonResult, read.WonResult)
	}

	// A second attempt (a hedge) exists: the win cannot tell the whole story.
	j2 := create("two")
	if _, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j2.ID, Provider: "q", Model: "m", Role: store.RoleHedge,
		LeaseOwner: "r1", LeaseFor: time.Minute}); err != nil {
		t.Fatal(err)
	}
	a2 := j2.Attempts[0]
	won, got, err = b.st.CompleteJob(ctx, store.Completion{JobID: j2.ID, AttemptID: a2.ID, ReadVersion: a2.ReadVersion,
		Result: json.RawMessage(`{}`)})
	if err != nil || !won || got != nil {
		t.Fatalf("won=%v job=%v err=%v: want a win without the job", won, got, err)
	}
}

// Issue 11: a listener paired with a store leaves that store's win
// notifications to the in-memory announcement, and still delivers wins made
// through any other store (another replica). Both jobs are watched, or
// neither win would notify.
func TestListenerSkipsNotificationsOfItsOwnWins(t *testing.T) {
	b := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	other := store.New(b.db.Pool, store.Options{})
	l := store.NewListener(b.db.Pool, nil)
	l.SkipNotificationsOf(b.st)
	go l.Run(ctx)
	<-l.Ready()

	win := func(st *store.Store, key string) string {
		nj := newJob(t, "acme", "triage", key, `{"k":"`+key+`"}`)
		nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
		j, _, err := st.CreateJob(ctx, nj)
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	complete := func(st *store.Store, id string) {
		j, err := st.GetJobAny(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		a := j.Attempts[0]
		if won, err := st.Complete(ctx, store.Completion{JobID: id, AttemptID: a.ID, ReadVersion: a.ReadVersion, Result: json.RawMessage(`{}`)}); err != nil || !won {
			t.Fatalf("won=%v err=%v", won, err)
		}
	}
	own, foreign := win(b.st, "own"), win(other, "foreign")
	for _, id := range []string{own, foreign} { // wins notify only watched jobs
		if _, err := b.st.WatchJob(ctx, "acme", id); err != nil {
			t.Fatal(err)
		}
	}
	ownCh, unsubOwn := l.Subscribe(own)
	defer unsubOwn()
	foreignCh, unsubForeign := l.Subscribe(foreign)
	defer unsubForeign()

	// The own win first, then the foreign one: notifications arrive in commit
	// order, so once the foreign one is delivered the own one would have been.
	complete(b.st, own)
	complete(other, foreign)
	if got := <-foreignCh; got != store.JobSucceeded {
		t.Fatalf("foreign win announced as %q", got)
	}
	select {
	case got := <-ownCh:
		t.Fatalf("the own win's notification was delivered (%q): it is announced in memory", got)
	default:
	}
}

// A routing decision made after the job finished (a hedge denied as the win
// committed) is not recorded: the job stays as its win left it — and as the
// win announced it to waiters.
func TestRoutingIsNotRecordedAfterTheJobFinished(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	nj := newJob(t, "acme", "triage", "routing-late", `{}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary, Routing: json.RawMessage(`[{"provider":"p"}]`)}, "r1"
	j, _, err := b.st.CreateJob(ctx, nj)
	if err != nil {
		t.Fatal(err)
	}
	a := j.Attempts[0]
	won, final, err := b.st.CompleteJob(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion, Result: json.RawMessage(`{}`)})
	if err != nil || !won || final == nil {
		t.Fatalf("won=%v job=%v err=%v", won, final, err)
	}
	if err := b.st.SetRouting(ctx, j.ID, "r1", json.RawMessage(`[{"provider":"p"},{"event":"hedge_denied"}]`)); err != nil {
		t.Fatal(err)
	}
	read, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(read.Routing) != string(final.Routing) {
		t.Fatalf("routing changed after the win: %s, announced %s", read.Routing, final.Routing)
	}
}

// Routing is recorded only by the job's orchestrator: a process whose lease
// was taken over (it stalled past it) cannot overwrite the decisions of the
// replica that runs the job now.
func TestRoutingIsRecordedOnlyByTheLeaseHolder(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	nj := newJob(t, "acme", "triage", "routing-fenced", `{}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary, Routing: json.RawMessage(`[{"provider":"p"}]`)}, "r1"
	j, _, err := b.st.CreateJob(ctx, nj)
	if err != nil {
		t.Fatal(err)
	}
	routing := func() string {
		t.Helper()
		read, err := b.st.GetJob(ctx, "acme", j.ID)
		if err != nil {
			t.Fatal(err)
		}
		return string(read.Routing)
	}
	before := routing()
	if err := b.st.SetRouting(ctx, j.ID, "r2", json.RawMessage(`[{"provider":"stale"}]`)); err != nil {
		t.Fatal(err)
	}
	if got := routing(); got != before {
		t.Fatalf("a process without the job's lease recorded routing %s (was %s)", got, before)
	}
	if err := b.st.SetRouting(ctx, j.ID, "r1", json.RawMessage(`[{"provider":"holder"}]`)); err != nil {
		t.Fatal(err)
	}
	if got := routing(); !strings.Contains(got, "holder") {
		t.Fatalf("the lease holder's routing was not recorded: %s", got)
	}
}
