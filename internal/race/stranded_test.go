package race_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// strandedSetup is a database with an orphaned triage job at version "0" — a
// version the repository's prompts (version "3") no longer have, as after a
// rolling update — and a replica ("new") of the new version on it.
type strandedSetup struct {
	newer *racetest.Bundle
	job   *store.Job
}

func setupStranded(t *testing.T) strandedSetup {
	t.Helper()
	newer := racetest.New(t, racetest.Options{LeaseOwner: "new",
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, err := store.Fingerprint("triage", "0", "", input)
	if err != nil {
		t.Fatal(err)
	}
	job, created, err := newer.Store.CreateJob(context.Background(), store.NewJob{
		Owner: "acme", Operation: "triage", IdempotencyKey: "stranded-" + t.Name(), Fingerprint: fp,
		PromptVersion: "0", Route: "default", Input: input, LeaseOwner: "old", LeaseFor: time.Minute,
	})
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	// Its replica ("old") stopped and gave the lease back (a drain).
	if err := newer.Store.ReleaseJobLease(context.Background(), job.ID, "old"); err != nil {
		t.Fatal(err)
	}
	return strandedSetup{newer: newer, job: job}
}

// orphanedFor makes the job an orphan since that long ago (an interval).
func (s strandedSetup) orphanedFor(t *testing.T, ago string) {
	t.Helper()
	if _, err := s.newer.DB.Pool.Exec(context.Background(),
		`UPDATE jobs SET lease_expires_at = now() - $2::interval WHERE id = $1`, s.job.ID, ago); err != nil {
		t.Fatal(err)
	}
}

// olderReplica is a replica of the previous version on the same database:
// the triage prompt loaded at version "0".
func (s strandedSetup) olderReplica(t *testing.T) *racetest.Bundle {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(racetest.PromptsDir(), "triage")
	if err := os.CopyFS(filepath.Join(dir, "triage"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "triage", prompt.ManifestFile)
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `version: "3"`) {
		t.Fatalf("%s: no version \"3\" to rewrite", manifest)
	}
	if err := os.WriteFile(manifest, []byte(strings.Replace(string(b), `version: "3"`, `version: "0"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	prompts, err := prompt.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return racetest.New(t, racetest.Options{DB: s.newer.DB, LeaseOwner: "old-2", Prompts: prompts,
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
}

// A job handed over during a rolling update that changed its prompt's
// version is left to a replica that still has that version: a replica of the
// new version does not adopt it (it failed such jobs with "no longer
// loaded"), and one of the old version runs it.
func TestJobOfAnotherPromptVersionIsLeftToAReplicaThatHasIt(t *testing.T) {
	s := setupStranded(t)
	s.newer.Runner.RecoverOnce(context.Background(), 10)
	j := s.newer.Job(t, s.job.ID)
	if j.State != store.JobPending || len(j.Attempts) != 0 || leaseOwner(t, &bundle{db: s.newer.DB}, j.ID) != "" {
		t.Fatalf("after the new replica's recovery pass: job %s (%v), %d attempts, lease %q; want it pending, untouched, unleased",
			j.State, j.Error, len(j.Attempts), leaseOwner(t, &bundle{db: s.newer.DB}, j.ID))
	}
	older := s.olderReplica(t)
	older.Runner.RecoverOnce(context.Background(), 10)
	if j = older.WaitSettled(t, s.job.ID); j.State != store.JobSucceeded {
		t.Fatalf("the old version's replica left the job %s (%v), want it succeeded", j.State, j.Error)
	}
	if s.newer.Prov["primary"].Calls() != 0 || older.Prov["primary"].Calls() != 1 {
		t.Fatalf("provider calls: new replica %d, old replica %d; want 0 and 1", s.newer.Prov["primary"].Calls(), older.Prov["primary"].Calls())
	}
}

// A job handed to a replica that cannot run it (a caller's retry or a
// resolution reaching a replica of the other version) is given back, not
// failed: the lease is released for a replica that can.
func TestJobSubmittedToAReplicaThatCannotRunItIsGivenBack(t *testing.T) {
	s := setupStranded(t)
	s.newer.Runner.Submit(s.job)
	s.newer.Stop() // waits for the job's orchestration to end
	j := s.newer.Job(t, s.job.ID)
	if j.State != store.JobPending || len(j.Attempts) != 0 || leaseOwner(t, &bundle{db: s.newer.DB}, j.ID) != "" {
		t.Fatalf("after the new replica ran it: job %s (%v), %d attempts, lease %q; want it pending and unleased",
			j.State, j.Error, len(j.Attempts), leaseOwner(t, &bundle{db: s.newer.DB}, j.ID))
	}
	older := s.olderReplica(t)
	older.Runner.RecoverOnce(context.Background(), 10)
	if j = older.WaitSettled(t, s.job.ID); j.State != store.JobSucceeded {
		t.Fatalf("job %s (%v) on the old version's replica, want it succeeded", j.State, j.Error)
	}
}

// A job no replica can run does not stay pending for ever: once its run has
// lasted execution.handover_wait (database clock), any replica adopts it and
// fails it, saying what was missing.
func TestJobNoReplicaCanRunFailsAfterTheHandoverWait(t *testing.T) {
	s := setupStranded(t)
	s.orphanedFor(t, "1 hour")
	// A replica that is not the leader never adopts a job it cannot run: the
	// leader fails it.
	s.newer.Runner.AdoptOnce(context.Background(), 10)
	if j := s.newer.Job(t, s.job.ID); j.State != store.JobPending || leaseOwner(t, &bundle{db: s.newer.DB}, j.ID) != "" {
		t.Fatalf("a follower's pass took a job it cannot run: %s, lease %q", j.State, leaseOwner(t, &bundle{db: s.newer.DB}, j.ID))
	}
	s.newer.Runner.RecoverOnce(context.Background(), 10)
	j := s.newer.WaitSettled(t, s.job.ID)
	if j.State != store.JobFailed || j.Error == nil {
		t.Fatalf("job %s (%v), want failed with a reason", j.State, j.Error)
	}
	msg := *j.Error
	for _, want := range []string{`"0"`, "handover_wait"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure %s does not mention %s", msg, want)
		}
	}
	if s.newer.Prov["primary"].Calls() != 0 {
		t.Fatal("a provider was called for a job whose prompt version is not loaded")
	}
}

// A chat job (stored without a prompt version) on a route this replica has
// is adopted as before.
func TestOrphanedChatJobOnAConfiguredRouteIsAdopted(t *testing.T) {
	b := racetest.New(t, racetest.Options{LeaseOwner: "new",
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK("hello")}}})
	input := json.RawMessage(`{"messages":[{"role":"user","content":"Say hello."}]}`)
	op := chat.Operation("default")
	fp, err := store.Fingerprint(op, "", "default", input)
	if err != nil {
		t.Fatal(err)
	}
	job, created, err := b.Store.CreateJob(context.Background(), store.NewJob{
		Owner: "acme", Operation: op, IdempotencyKey: "chat-orphan", Fingerprint: fp,
		Route: "default", Input: input, LeaseOwner: "old", LeaseFor: time.Minute,
	})
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	if err := b.Store.ReleaseJobLease(context.Background(), job.ID, "old"); err != nil {
		t.Fatal(err)
	}
	b.Runner.RecoverOnce(context.Background(), 10)
	if j := b.WaitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Fatalf("chat job %s (%v), want it adopted and succeeded", j.State, j.Error)
	}
}

// Recovery's leader may be a replica that cannot run the job (during a
// rolling update it often is one of the new version): another replica that
// can, in its own pass, adopts the job once the leader has left it for a
// lease — and not before, so that orphans are the leader's first.
func TestAReplicaThatIsNotTheLeaderAdoptsAJobTheLeaderCannotRun(t *testing.T) {
	s := setupStranded(t)
	older := s.olderReplica(t)
	s.newer.Runner.RecoverOnce(context.Background(), 10) // the leader's pass leaves it
	older.Runner.AdoptOnce(context.Background(), 10)     // too soon: the leader's first
	if j := older.Job(t, s.job.ID); j.State != store.JobPending || leaseOwner(t, &bundle{db: older.DB}, j.ID) != "" {
		t.Fatalf("job %s, lease %q: want it left to the leader for a lease", j.State, leaseOwner(t, &bundle{db: older.DB}, j.ID))
	}
	s.orphanedFor(t, "1 minute") // past a lease (30s), within handover_wait (2m)
	s.newer.Runner.RecoverOnce(context.Background(), 10)
	if j := s.newer.Job(t, s.job.ID); j.State != store.JobPending {
		t.Fatalf("the leader failed the job within handover_wait: %s (%v)", j.State, j.Error)
	}
	older.Runner.AdoptOnce(context.Background(), 10)
	if j := older.WaitSettled(t, s.job.ID); j.State != store.JobSucceeded {
		t.Fatalf("job %s (%v), want it adopted by the follower that has its version and succeeded", j.State, j.Error)
	}
}

// The wait counts from the hand-over, not from the start of the job's run: a
// job that ran longer than handover_wait on a replica that then drained is
// still left to a replica of its version.
func TestJobHandedOverLateInItsRunIsNotFailedAtOnce(t *testing.T) {
	s := setupStranded(t)
	if _, err := s.newer.DB.Pool.Exec(context.Background(),
		`UPDATE jobs SET run_started_at = now() - interval '1 hour' WHERE id = $1`, s.job.ID); err != nil {
		t.Fatal(err)
	}
	s.newer.Runner.RecoverOnce(context.Background(), 10)
	if j := s.newer.Job(t, s.job.ID); j.State != store.JobPending || leaseOwner(t, &bundle{db: s.newer.DB}, j.ID) != "" {
		t.Fatalf("job %s (%v), lease %q: want it left for a replica of its version", j.State, j.Error, leaseOwner(t, &bundle{db: s.newer.DB}, j.ID))
	}
}
