package ops

import (
	"context"
	"time"

	"github.com/routerhq/router/internal/store"
)

// counterWindow is the window of the dashboard's counters and cost tiles.
const counterWindow = time.Hour

// counterReads are the dashboard's counters section as read: the live jobs'
// counts, the last hour's counters and its cost, each with its error.
type counterReads struct {
	live        map[string]int64
	liveErr     error
	counters    *store.Counters
	countersErr error
	hedge       *store.HedgeCost
	hedgeErr    error
}

// readCounters reads the counters section, one read after another within
// the section's bound.
func (s *Server) readCounters(ctx context.Context) (c counterReads) {
	c.live, c.liveErr = s.store.LiveJobCounts(ctx)
	c.counters, c.countersErr = s.store.RecentCounters(ctx, counterWindow)
	c.hedge, c.hedgeErr = s.store.RecentHedgeCost(ctx, counterWindow)
	return c
}

// show puts the counters section on d, listing its errors.
func (r counterReads) show(d *dashData, ops Config) {
	// The jobs still waiting — unknown ones for an operator's resolution,
	// pending or running ones for a replica — are counted whatever their age
	// (the live jobs' index): an unknown job created more than the window
	// ago still needs someone. When they cannot be read, their tiles say
	// "–", not 0 (the error is listed on the page).
	liveUnknown, liveRunning, livePending := "–", "–", "–"
	if r.liveErr != nil {
		d.Errors = append(d.Errors, "live jobs: "+r.liveErr.Error())
	} else {
		live := r.live
		liveUnknown, liveRunning, livePending = count(live[store.JobUnknown]), count(live[store.JobRunning]), count(live[store.JobPending])
	}
	if r.countersErr != nil {
		d.Errors = append(d.Errors, "counters: "+r.countersErr.Error())
	} else {
		c := r.counters
		d.Counters = c
		d.CounterTiles = []tile{
			{"jobs succeeded", count(c.JobsByState[store.JobSucceeded]), "ok"},
			{"jobs failed", count(c.JobsByState[store.JobFailed]), "bad"},
			{"jobs unknown", liveUnknown, "warn"},
			{"jobs running", liveRunning, ""},
			{"jobs pending", livePending, ""},
			{"jobs cancelled", count(c.JobsByState[store.JobCancelled]), ""},
			{"attempts", count(sum(c.AttemptsByState)), ""},
			{"races lost", count(c.RacesLost), ""},
			{"hedges started", count(c.HedgesStarted), ""},
			{"hedges won", count(c.HedgesWon), "ok"},
			{"failovers", count(c.AttemptsByRole[store.RoleFailover]), ""},
			{"retries", count(c.AttemptsByRole[store.RoleRetry]), ""},
		}
	}
	if r.hedgeErr != nil {
		d.Errors = append(d.Errors, "cost: "+r.hedgeErr.Error())
	} else {
		h := r.hedge
		d.Hedge = h
		d.ShowCost = ops.Priced || h.TotalUSD > 0
		d.ShowLatencyBought = ops.KeepLosers
	}
}
