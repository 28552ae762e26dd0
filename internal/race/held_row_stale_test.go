package race_test

import (
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A hedge that could not start because another transaction held the job's
// row leaves the job to its lease only while that is why nothing is in
// flight. Here the row is freed, the fallback's breaker opens (it admitted
// the hedge once, then refuses), and the primary fails: nothing is left to
// try, and the job is failed at once. It used to be left to its lease, the
// held row's mark outliving the try it was about, for recovery to adopt it
// and fail it a lease later. Found in review.
func TestHeldRowMarkDoesNotOutliveItsTry(t *testing.T) {
	called, release := make(chan struct{}), make(chan struct{})
	adm := &refuseAfter{left: map[string]int{"fallback": 1}, calls: map[string]int{}}
	b := setupWith(t, race.Route{HedgeAfter: 20 * time.Millisecond}, adm,
		provSpec{name: "primary", respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				close(called)
				<-release
			}
			return providers.Step{Status: 500}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	pid, unhold := holdRows(t, b, `SELECT FROM jobs WHERE id = $1 FOR UPDATE`, job.ID)
	<-called
	awaitGaveUp(t, b, pid, createAttemptLock) // the hedge, admitted, could not start
	unhold()
	close(release) // the primary fails; the fallback's breaker refuses from now on

	j := b.waitSettled(t, job.ID)
	if j.State != store.JobFailed || !strings.Contains(derefString(j.Error), "breaker open") {
		t.Fatalf("job %s (%s); want failed at once, the fallback's breaker refusing: nothing was left to try",
			j.State, derefString(j.Error))
	}
	if fb := attemptBy(j, "fallback"); fb != nil {
		t.Fatalf("the fallback has an attempt %+v; its breaker refused it", fb)
	}
}
