package race_test

import (
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A job resumed after its unknown attempt was resolved `failed`, with no
// target left to try, fails with that attempt's reason, naming its provider
// once ("primary: timeout: …"), as a live failure's reason does — not
// "primary: provider primary: timeout: …" (the stored message's own prefix
// after the reason's).
func TestResolvedFailureNamesTheProviderOnce(t *testing.T) {
	b := setup(t, race.Route{Deadline: time.Minute},
		provSpec{name: "primary", respond: hang, timeout: 50 * time.Millisecond},
	)
	job := b.submit(t)
	if j := b.waitSettled(t, job.ID); j.State != store.JobUnknown {
		t.Fatalf("job %s (%v), want unknown", j.State, derefString(j.Error))
	}
	resume, err := b.st.ResolveAttempt(t.Context(), store.Resolution{JobID: job.ID, Seq: 1, Outcome: "failed", Note: "checked"})
	if err != nil || !resume {
		t.Fatalf("resolve: resume=%v err=%v", resume, err)
	}
	b.runner.Submit(job)
	j := b.waitSettled(t, job.ID)
	msg := derefString(j.Error)
	if j.State != store.JobFailed {
		t.Fatalf("resolved job %s (%v), want it failed: its only target was tried", j.State, msg)
	}
	if !strings.Contains(msg, "primary: timeout") || strings.Count(msg, "primary") != 1 {
		t.Fatalf("job error %q: want the primary's failure named once, as \"primary: timeout: …\"", msg)
	}
}
