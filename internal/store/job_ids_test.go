package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/routerhq/router/internal/store"
)

// Every store function that takes a job id from a caller answers ErrNotFound
// for an id that is not a UUID in canonical form — another spelling of an
// existing job's id included — and sends nothing that PostgreSQL would
// reject: no database error leaves the store, and the job is untouched.
func TestNonCanonicalJobIDIsNotFound(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "k1", `{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	startAttempt(t, b, j.ID, "primary", "primary")
	if j, err = b.st.GetJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func(id string) error{
		"GetJob":      func(id string) error { _, err := b.st.GetJob(ctx, "acme", id); return err },
		"GetJobAny":   func(id string) error { _, err := b.st.GetJobAny(ctx, id); return err },
		"JobState":    func(id string) error { _, err := b.st.JobState(ctx, "acme", id); return err },
		"JobStateAny": func(id string) error { _, err := b.st.JobStateAny(ctx, id); return err },
		"WatchJob":    func(id string) error { _, err := b.st.WatchJob(ctx, "acme", id); return err },
		"JobEvents":   func(id string) error { _, err := b.st.JobEvents(ctx, "acme", id); return err },
		"CancelJob":   func(id string) error { return b.st.CancelJob(ctx, "acme", id) },
		"RetryJob":    func(id string) error { return b.st.RetryJob(ctx, "acme", id) },
		"SettleJob":   func(id string) error { _, err := b.st.SettleJob(ctx, id, "no"); return err },
		"ResolveAttempt": func(id string) error {
			_, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: id, Seq: 1, Outcome: "failed"})
			return err
		},
	}
	ids := []string{"", "nope", "urn:uuid:" + j.ID, "{" + j.ID + "}", strings.ReplaceAll(j.ID, "-", ""),
		strings.ToUpper(j.ID), j.ID + " ", j.ID[:35] + "\x00", j.ID[:35] + "g"}
	for name, call := range calls {
		for _, id := range ids {
			err := call(id)
			var pgErr *pgconn.PgError
			if !errors.Is(err, store.ErrNotFound) || errors.As(err, &pgErr) {
				t.Errorf("%s(%q) = %v, want ErrNotFound", name, id, err)
			}
		}
	}
	got, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil || got.State != j.State || got.Version != j.Version || got.Attempts[0].State != store.AttemptRunning {
		t.Fatalf("the job afterwards: %+v, %v; want it as it was (%s, version %d, attempt running)", got, err, j.State, j.Version)
	}
}

// A listing position names its job by any spelling of a UUID the API's cursor
// decoding accepts; the store hands PostgreSQL the canonical one. A position
// whose id is no UUID is an error of the store's own, not of the database.
func TestListPositionIDSpellings(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	var jobs []*store.Job
	for _, key := range []string{"k1", "k2"} {
		j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", key, `{"k":"`+key+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	first, next, err := b.st.ListJobs(ctx, store.ListFilter{Owner: "acme", Limit: 1})
	if err != nil || len(first) != 1 || next == nil {
		t.Fatalf("first page: %d jobs, next %v, err %v", len(first), next, err)
	}
	for _, id := range []string{next.ID, "urn:uuid:" + next.ID, "{" + next.ID + "}", strings.ToUpper(next.ID),
		strings.ReplaceAll(next.ID, "-", "")} {
		page, _, err := b.st.ListJobs(ctx, store.ListFilter{Owner: "acme", Limit: 1,
			After: &store.ListPosition{CreatedAt: next.CreatedAt, ID: id}})
		if err != nil || len(page) != 1 || page[0].ID == first[0].ID {
			t.Errorf("page after %q: %v, err %v; want the other job", id, page, err)
		}
	}
	for _, id := range []string{"nope", "", next.ID + "\x00"} {
		_, _, err := b.st.ListJobs(ctx, store.ListFilter{Owner: "acme", Limit: 1,
			After: &store.ListPosition{CreatedAt: time.Now(), ID: id}})
		var pgErr *pgconn.PgError
		if err == nil || errors.As(err, &pgErr) || !strings.Contains(err.Error(), "not a UUID") {
			t.Errorf("position id %q: err %v, want the store's own error", id, err)
		}
	}
}

// An operation filter PostgreSQL cannot read as text names no job: an empty
// listing, not a database error.
func TestListOperationNotText(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if _, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "k1", `{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"triage\x00", "\xff", "tri\x00age"} {
		jobs, next, err := b.st.ListJobs(ctx, store.ListFilter{Owner: "acme", Operation: op, Limit: 10})
		if err != nil || len(jobs) != 0 || next != nil {
			t.Errorf("operation %q: %d jobs, next %v, err %v; want none and no error", op, len(jobs), next, err)
		}
	}
}
