package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A job.failed event's body showed the failed job without the next_step
// GET /v1/jobs/{id} gives it, so a caller that learns of the failure by its
// webhook (as it is meant to) was not told that the router will not try it
// again, nor how to run it again, nor that the conformance gate kept its
// fallback out. The job in the body now carries next_step, the same words as
// GET; the job.cancelled event of the same owner carries none.
func TestFailedEventCarriesNextStep(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	e := setup(t, rc.srv.URL, 5*time.Second)
	ctx := context.Background()
	j := e.newJob(t, "acme", "k1")
	routing := `[{"provider":"p","eligible":true},` +
		`{"provider":"f","eligible":false,"reason":"no passing conformance run for triage@2","cause":"conformance_gate"}]`
	a, err := e.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p", Role: store.RolePrimary,
		LeaseOwner: "test", Routing: []byte(routing)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed, Error: map[string]any{"kind": "server_error"}}); err != nil {
		t.Fatal(err)
	}
	if st, err := e.st.SettleJob(ctx, j.ID, "p: server error"); err != nil || st != store.JobFailed {
		t.Fatalf("settle: %s %v", st, err)
	}
	failed := e.job(t, j.ID)
	cancelled := e.cancel(t, "acme", "k2")
	e.start(t)

	bodies := map[string][]byte{}
	for range 2 {
		r := rc.next(t)
		p := verified(t, r)
		bodies[p.Type] = r.body
	}
	var got struct {
		Job map[string]any `json:"job"`
	}
	if err := json.Unmarshal(bodies["job.failed"], &got); err != nil {
		t.Fatalf("job.failed body %s: %v", bodies["job.failed"], err)
	}
	step, _ := got.Job["next_step"].(string)
	if want := race.NextStep(failed); want == "" || step != want {
		t.Fatalf("job.failed body %s: next_step %q, want %q (as GET /v1/jobs/{id} says)", bodies["job.failed"], step, want)
	}
	for _, want := range []string{"will not try it again by itself", "POST /v1/jobs/" + j.ID + "/retry",
		"conformance gate", "f: no passing conformance run for triage@2"} {
		if !strings.Contains(step, want) {
			t.Errorf("next_step %q does not say %q", step, want)
		}
	}
	if body := bodies["job.cancelled"]; body == nil || strings.Contains(string(body), "next_step") {
		t.Errorf("job.cancelled body of %s: %s, want one without next_step", cancelled.ID, body)
	}
}
