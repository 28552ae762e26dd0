package race_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// An attempt that went unknown while a sibling was in flight, resolved
// `failed` by an operator before the sibling failed too, is named in the
// job's error with why it ended, as every other target tried is: the job's
// error used to give only the sibling's reason, as if the primary had never
// been tried.
func TestResolvedUnknownAttemptNamedInTheJobsError(t *testing.T) {
	obs := &providerEnded{provider: "primary", state: store.AttemptUnknown, ended: make(chan struct{})}
	secondCalled, secondGo := make(chan struct{}), make(chan struct{})
	var secondOnce sync.Once
	b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond}, nil, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-secondCalled // silent until its hedge is in flight
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
		provSpec{name: "second", respond: func(int, *providers.Request) providers.Step {
			secondOnce.Do(func() { close(secondCalled) })
			<-secondGo // in flight until the primary has been resolved
			return providers.Step{Status: 503}
		}},
	)
	letSecondEnd := releaser(t, secondGo)
	job := b.submit(t)
	awaitSignal(t, obs.ended, "the primary's attempt ended unknown")
	resolveUnknown(t, b, job.ID, "primary")
	letSecondEnd()

	j := b.waitSettled(t, job.ID)
	msg := derefString(j.Error)
	if j.State != store.JobFailed {
		t.Fatalf("job %s (%s), attempts %v: want it failed, its unknown attempt resolved failed and the other target failed", j.State, msg, attemptStates(j))
	}
	if !strings.Contains(msg, "primary: timeout") || !strings.Contains(msg, "second:") {
		t.Fatalf("job error %q: want both targets tried named with why each ended (\"primary: timeout: …\", \"second: …\")", msg)
	}
}
