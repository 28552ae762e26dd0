package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A cancellation whose job row another transaction holds (an operator's open
// psql transaction, a replica cut off mid-transaction) is answered 503 busy
// with Retry-After once the store's bounded lock wait ends — nothing changed,
// send it again shortly — instead of waiting as long as the row is held. The
// job here has succeeded: the cancellation locks the row before it reads the
// state, so it waits all the same; once the row is free it is answered 409.
func TestCancelOfAHeldJobIsA503Busy(t *testing.T) {
	b := setup(t, options{})
	ctx := context.Background()
	r := b.create(t, acmeKey, "cancel-held", triageBody("Login broken"), "Prefer", "wait=30")
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
	got := make(chan reply, 1)
	go func() {
		r, err := send(b.srv.URL+"/v1/jobs/"+id+"/cancel", "POST", acmeKey, "")
		if err != nil {
			r.raw = []byte(err.Error())
		}
		got <- r
	}()
	select {
	case r = <-got:
	case <-time.After(time.Minute): // a hang guard, not a timing assertion
		t.Fatal("the cancellation still waited for the held job row after a minute")
	}
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" || !strings.Contains(string(r.raw), `problems/busy"`) ||
		!strings.Contains(string(r.raw), id) {
		t.Fatalf("cancel of a held job: %d Retry-After %q %s; want 503 busy with Retry-After 1 naming the job", r.status, r.header.Get("Retry-After"), r.raw)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/cancel", acmeKey, ""); r.status != http.StatusConflict {
		t.Fatalf("cancel once the row is free: %d %s; want 409 (the job succeeded)", r.status, r.raw)
	}
}
