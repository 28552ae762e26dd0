package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// unknownJob makes a job whose attempts, one per entry of kinds, all end
// unknown: each with that error kind ("" for none), except "lease_expired",
// whose attempt is left to its lease and expired the way recovery does it.
// The job is settled unknown and returned as read then.
func unknownJob(t *testing.T, b *bundle, key string, kinds ...string) *store.Job {
	t.Helper()
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", key, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	// All are started before any ends: an unknown attempt blocks new ones.
	attempts := make([]*store.Attempt, len(kinds))
	for i := range kinds {
		role := store.RolePrimary
		if i > 0 {
			role = store.RoleHedge
		}
		attempts[i] = startAttempt(t, b, j.ID, "p"+string(rune('1'+i)), role)
	}
	var expired []string
	for i, kind := range kinds {
		switch kind {
		case "lease_expired":
			expired = append(expired, attempts[i].ID)
		case "":
			if err := b.st.FinishAttempt(ctx, attempts[i].ID, store.AttemptOutcome{State: store.AttemptUnknown}); err != nil {
				t.Fatal(err)
			}
		default:
			if err := b.st.FinishAttempt(ctx, attempts[i].ID, store.AttemptOutcome{State: store.AttemptUnknown,
				Error: map[string]any{"kind": kind, "fault": "router", "outcome_unknown": true}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(expired) > 0 {
		// Their router died: recovery marks them unknown and settles the job.
		if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = ANY($1)`,
			expired); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
			t.Fatal(err)
		}
	} else if s, err := b.st.SettleJob(ctx, j.ID, "all failed"); err != nil || s != store.JobUnknown {
		t.Fatalf("settle: %s, %v; want unknown", s, err)
	}
	got, err := b.st.GetJobAny(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.JobUnknown || got.Error == nil {
		t.Fatalf("job %s with error %q; want it unknown, saying why", got.State, derefOr(got.Error))
	}
	return got
}

// An unknown job's error says how each of its attempts became unknown, by
// the attempt's error kind: it said "timed out" for all, sending an
// operator whose attempt was cut by the router's own shutdown, or whose
// router died (its lease expired), to look at the provider's latency. A
// timeout keeps the wording it always had. Found in review.
func TestUnknownJobSaysHowEachAttemptBecameUnknown(t *testing.T) {
	const tail = ": the provider may or may not have done the work. "
	for _, tc := range []struct {
		name  string
		kinds []string
		want  string // before tail
		hint  string // after tail, {id} for the job's id
	}{
		{"timeout", []string{"timeout"},
			"attempt 1 timed out and its outcome is unknown",
			"Resolve it with POST /v1/jobs/{id}/attempts/1/resolve, or cancel the job."},
		{"timeouts", []string{"timeout", "timeout"},
			"attempts 1 and 2 timed out and their outcomes are unknown",
			"Resolve each with POST /v1/jobs/{id}/attempts/{seq}/resolve, {seq} being 1 and 2, or cancel the job."},
		{"shutdown", []string{"shutdown"},
			"attempt 1 was cut off by a router shutdown and its outcome is unknown",
			"Resolve it with POST /v1/jobs/{id}/attempts/1/resolve, or cancel the job."},
		{"shutdowns", []string{"shutdown", "shutdown"},
			"attempts 1 and 2 were cut off by a router shutdown and their outcomes are unknown",
			"Resolve each with POST /v1/jobs/{id}/attempts/{seq}/resolve, {seq} being 1 and 2, or cancel the job."},
		{"lease expired", []string{"lease_expired"},
			"attempt 1 ended when its router stopped renewing its lease (lease expired) and its outcome is unknown",
			"Resolve it with POST /v1/jobs/{id}/attempts/1/resolve, or cancel the job."},
		{"leases expired", []string{"lease_expired", "lease_expired"},
			"attempts 1 and 2 ended when their routers stopped renewing their leases (lease expired) and their outcomes are unknown",
			"Resolve each with POST /v1/jobs/{id}/attempts/{seq}/resolve, {seq} being 1 and 2, or cancel the job."},
		{"no kind", []string{""},
			"attempt 1 ended without a known outcome",
			"Resolve it with POST /v1/jobs/{id}/attempts/1/resolve, or cancel the job."},
		{"another kind", []string{"server_error", "server_error"},
			"attempts 1 and 2 ended without a known outcome",
			"Resolve each with POST /v1/jobs/{id}/attempts/{seq}/resolve, {seq} being 1 and 2, or cancel the job."},
		{"mixed", []string{"timeout", "shutdown", "timeout", "", "lease_expired"},
			"attempts 1 and 3 timed out, attempt 2 was cut off by a router shutdown, attempt 4 ended without a known outcome, " +
				"and attempt 5 ended when its router stopped renewing its lease (lease expired); their outcomes are unknown",
			"Resolve each with POST /v1/jobs/{id}/attempts/{seq}/resolve, {seq} being 1, 2, 3, 4 and 5, or cancel the job."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			j := unknownJob(t, b, "how-"+tc.name, tc.kinds...)
			want := tc.want + tail + strings.ReplaceAll(tc.hint, "{id}", j.ID)
			if *j.Error != want {
				t.Fatalf("the unknown job's error\n %q\nwant\n %q", *j.Error, want)
			}
		})
	}
}

// Resolving one of an unknown job's unknown attempts as failed leaves the job
// unknown, and its error names only the attempts still unknown: it kept
// naming the resolved one too, and following it for that one was refused
// (409: the attempt is no longer unknown). The rewrite is a change of the job
// like any other: its version grows. Found in review.
func TestResolvingOneUnknownAttemptRenamesTheOthers(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := unknownJob(t, b, "rename", "timeout", "shutdown", "timeout")
	resolve := func(seq int) bool {
		t.Helper()
		resume, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: j.ID, Seq: seq, Outcome: "failed", Note: "no record"})
		if err != nil {
			t.Fatalf("resolve attempt %d: %v", seq, err)
		}
		return resume
	}
	read := func() *store.Job {
		t.Helper()
		got, err := b.st.GetJobAny(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	if resolve(1) {
		t.Fatal("resolving attempt 1 resumed the job; attempts 2 and 3 are still unknown")
	}
	got := read()
	want := "attempt 2 was cut off by a router shutdown, and attempt 3 timed out; their outcomes are unknown: " +
		"the provider may or may not have done the work. Resolve each with POST /v1/jobs/" + j.ID +
		"/attempts/{seq}/resolve, {seq} being 2 and 3, or cancel the job."
	if got.State != store.JobUnknown || derefOr(got.Error) != want {
		t.Fatalf("after resolving attempt 1: job %s with error\n %q\nwant unknown with\n %q", got.State, derefOr(got.Error), want)
	}
	if got.Version <= j.Version {
		t.Fatalf("the job's error changed but its version stayed %d (was %d)", got.Version, j.Version)
	}

	if resolve(3) {
		t.Fatal("resolving attempt 3 resumed the job; attempt 2 is still unknown")
	}
	got = read()
	want = "attempt 2 was cut off by a router shutdown and its outcome is unknown: the provider may or may not have done the work. " +
		"Resolve it with POST /v1/jobs/" + j.ID + "/attempts/2/resolve, or cancel the job."
	if got.State != store.JobUnknown || derefOr(got.Error) != want {
		t.Fatalf("after resolving attempt 3: job %s with error\n %q\nwant unknown with\n %q", got.State, derefOr(got.Error), want)
	}

	// The job's error is followed: the last one resumes it.
	if !resolve(2) {
		t.Fatal("resolving the last unknown attempt did not resume the job")
	}
	if got = read(); got.State != store.JobRunning || got.Error != nil {
		t.Fatalf("after the last resolution: job %s with error %q; want running with none", got.State, derefOr(got.Error))
	}
}
