package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// A 503 busy about the caller's own job names it, in job_id and
// X-Router-Job-Id, as every answer about an existing job does (docs/api.md);
// another owner asking about the same job, held all the while, gets the 404
// of a job that does not exist, naming nothing.
func TestBusyCancelNamesTheJob(t *testing.T) {
	b := setup(t, options{})
	ctx := context.Background()
	r := b.create(t, acmeKey, "busy-job-id", triageBody("Login broken"), "Prefer", "wait=30")
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	id := r.job()
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `UPDATE jobs SET error = error WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	cancel := func(key, id string) reply {
		got := make(chan reply, 1)
		go func() {
			r, err := send(b.srv.URL+"/v1/jobs/"+id+"/cancel", "POST", key, "")
			if err != nil {
				r.raw = []byte(err.Error())
			}
			got <- r
		}()
		select {
		case r := <-got:
			return r
		case <-time.After(time.Minute): // a hang guard, not a timing assertion
			t.Fatal("the cancellation still waited for the held job row after a minute")
			return reply{}
		}
	}
	r = cancel(acmeKey, id)
	if r.status != http.StatusServiceUnavailable || r.body["job_id"] != id || r.header.Get("X-Router-Job-Id") != id {
		t.Errorf("owner's cancel of a held job: %d job_id %v X-Router-Job-Id %q %s; want 503 naming the job in both",
			r.status, r.body["job_id"], r.header.Get("X-Router-Job-Id"), r.raw)
	}
	other := cancel(globexKey, id)
	none := cancel(globexKey, "0193b0f2-6c1e-7a7b-9d2e-3c4b5a6d7e8f")
	for _, r := range []reply{other, none} {
		if r.status != http.StatusNotFound || r.body["job_id"] != nil || r.header.Get("X-Router-Job-Id") != "" {
			t.Errorf("another owner's cancel: %d job_id %v X-Router-Job-Id %q %s; want a 404 naming no job",
				r.status, r.body["job_id"], r.header.Get("X-Router-Job-Id"), r.raw)
		}
	}
	if other.body["title"] != none.body["title"] || other.body["type"] != none.body["type"] {
		t.Errorf("another owner's held job %s and no job %s differ", other.raw, none.raw)
	}
}
