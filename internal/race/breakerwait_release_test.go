package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
)

// A job that every target's circuit breaker refuses is run again when one
// may admit it (runLater), its lease given back meanwhile. Given back with
// an end of now, the job was an orphan at once: recovery, oldest first,
// adopted it on every pass only for the breakers to refuse it again, and
// enough such jobs filled every adoption batch ahead of the other orphans.
// Its lease now ends when the wait does, on the database's clock: until
// then recovery leaves it alone.
func TestJobWaitingForABreakerIsNoOrphanUntilTheWaitEnds(t *testing.T) {
	b := setupWith(t, race.Route{}, openShown{openFor{open: map[string]bool{"primary": true}}}, // admits again in a minute
		provSpec{name: "primary", respond: ok(validTriage)})
	job := b.SubmitUnplanned(t)
	b.stop() // the run has ended, its lease given back; the run a minute later is not scheduled any more
	if n := countRows(t, b, `SELECT count(*) FROM jobs WHERE id = $1 AND state IN ('pending', 'running')
			AND lease_owner IS NULL AND lease_expires_at > now()`, job.ID); n != 1 {
		t.Fatalf("job %s (%s): want it live, its lease released with no owner and an end after the breaker's wait (a minute), not now", b.job(t, job.ID).State, derefString(b.job(t, job.ID).Error))
	}
	ids, err := b.st.ClaimOrphans(context.Background(), "replica-b", time.Minute, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 0 {
		t.Fatalf("recovery adopted %v while the job waits for a breaker", ids)
	}
}

// openShown is openFor with the breakers' state shown to routing (as the
// breaker set's State does), so that a job they all refuse waits for them.
type openShown struct{ openFor }

func (a openShown) State(p string) (bool, string) {
	if a.open[p] {
		return false, "breaker open"
	}
	return true, ""
}

// countRows is the count(*) that q answers.
func countRows(t *testing.T, b *bundle, q string, args ...any) int {
	t.Helper()
	var n int
	if err := b.db.Pool.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
