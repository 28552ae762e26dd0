package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A cancellation whose job row another transaction holds (an operator's open
// psql transaction, a replica cut off mid-transaction) is answered 503 busy
// with Retry-After once the store's bounded lock wait ends — nothing changed,
// send it again shortly — instead of waiting as long as the row is held. The
// job here has succeeded: the cancellation locks the row before it reads the
// state, so it waits all the same; once the row is free it is answered 409.
func TestCancelOfAHeldJobIsA503Busy(t *testing.T) {
	b := setup(t, options{})
	r := b.create(t, acmeKey, "cancel-held", triageBody("Login broken"), "Prefer", "wait=30")
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	id := r.job()
	release := b.holdJobRow(t, id)
	expectBusy(t, b.sendWhileHeld(t, "/v1/jobs/"+id+"/cancel", ""), id, "cancel of a held job")
	release()
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/cancel", acmeKey, ""); r.status != http.StatusConflict {
		t.Fatalf("cancel once the row is free: %d %s; want 409 (the job succeeded)", r.status, r.raw)
	}
}

// expectBusy fails the test unless r is the 503 busy, with Retry-After: 1,
// of a request whose job id's row another transaction held.
func expectBusy(t *testing.T, r reply, id, what string) {
	t.Helper()
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" || !strings.Contains(string(r.raw), `problems/busy"`) ||
		!strings.Contains(string(r.raw), id) {
		t.Fatalf("%s: %d Retry-After %q %s; want 503 busy with Retry-After 1 naming the job", what, r.status, r.header.Get("Retry-After"), r.raw)
	}
}
