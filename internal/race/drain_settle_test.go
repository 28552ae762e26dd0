package race_test

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// SPEC §3: `failed` — every eligible attempt ended in a definitive failure;
// docs/operations.md (Shutdown, 5): only a job "whose race is not over" is
// handed over. A job whose only target fails definitively while the process
// drains has nothing left to try: it is settled failed, not handed over
// unsettled (running, lease released) for another replica to adopt only to
// fail it — never, if this was the last replica. (Found in review.)
func TestDrainSettlesAJobWithNothingLeftToTry(t *testing.T) {
	called, release := make(chan struct{}), make(chan struct{})
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			close(called)
			<-release
			return providers.Step{Output: `{"not":"valid"}`} // invalid output: a definitive end
		}},
	)
	job := b.submit(t)
	<-called
	b.runner.Drain(0) // SIGTERM while the only attempt is in flight
	close(release)
	b.stop()
	j := b.job(t, job.ID)
	if j.State != store.JobFailed {
		t.Fatalf("job %s (lease owner %q) with attempts %s; want failed: no target is left to try",
			j.State, leaseOwner(t, b, job.ID), roles(j))
	}
}
