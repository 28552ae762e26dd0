package race_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// unknownOnHangingPrimary sets up a route whose primary hangs past its 30ms
// timeout and whose fallback answers fallbackOutput, submits a job and waits
// for it to settle: unknown, since the primary may have done the work. It
// returns the bundle, the job as submitted and the job as it settled.
func unknownOnHangingPrimary(t *testing.T, fallbackOutput string) (b *bundle, job, settled *store.Job) {
	t.Helper()
	b = setup(t, race.Route{},
		provSpec{name: "primary", respond: hang, timeout: 30 * time.Millisecond},
		provSpec{name: "fallback", respond: ok(fallbackOutput)},
	)
	job = b.submit(t)
	settled = b.waitSettled(t, job.ID)
	if settled.State != store.JobUnknown {
		t.Fatalf("state %s, want unknown", settled.State)
	}
	return b, job, settled
}
