package race_test

import (
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// failedOnce tells, once, that provider's attempt failed, and holds the
// attempt's end (in its goroutine, before the race hears of it) until goOn is
// closed.
type failedOnce struct {
	nopRefusalObserver
	provider string
	once     sync.Once
	failed   chan struct{}
	goOn     chan struct{}
}

func (o *failedOnce) AttemptFinished(provider, _, state string, _ providers.Kind, _ time.Duration, _ providers.Usage) {
	if provider == o.provider && state == store.AttemptFailed {
		o.once.Do(func() {
			close(o.failed)
			<-o.goOn
		})
	}
}

// docs/lifecycle.md ("Rows another transaction holds"): an attempt whose
// creation gave up on the job's row held by another transaction is tried
// again, and the job "is not failed for a target it could not try". A retry
// that came due while the row was held is kept (ready), not dropped: it is
// made when the attempt in flight beside it ends, and the job succeeds on it
// (it failed with the retry unused).
func TestRetryRefusedOnAHeldJobRowIsMadeLater(t *testing.T) {
	gaveUp := make(chan struct{})
	adm := &unusedAdmission{target: "second", seen: map[string]int{}, unused: func(k int) {
		if k == 2 { // second's retry
			close(gaveUp)
		}
	}}
	obs := &failedOnce{provider: "second", failed: make(chan struct{}), goOn: make(chan struct{})}
	primaryGo := make(chan struct{})
	b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond, MaxInflight: 2}, adm, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-primaryGo // in flight all along, silent: hedged by second
			return providers.Step{Status: 503}
		}},
		provSpec{name: "second", maxRetries: 1, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Status: 503}
			}
			return providers.Step{Output: validTriage}
		}},
	)
	goOn, letPrimaryEnd := releaser(t, obs.goOn), releaser(t, primaryGo)
	job := b.submit(t)
	awaitSignal(t, obs.failed, "second's failure") // recorded; the race has not heard of it yet
	unhold := holdJobRow(t, b, job.ID)
	goOn() // the race schedules second's retry, whose creation gives up on the held row
	awaitSignal(t, gaveUp, "second's retry giving up on the held row")
	unhold()
	letPrimaryEnd() // the primary fails: its end is the race's next event

	j := b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded || b.prov["second"].Calls() != 2 {
		t.Fatalf("job %s (error %s), attempts %v, second called %d times: want second's retry made once the row was free, and the job succeeded",
			j.State, refusalJobError(j), attemptStates(j), b.prov["second"].Calls())
	}
}
