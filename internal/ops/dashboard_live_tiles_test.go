package ops_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
)

// The dashboard's "jobs unknown" tile counts every job still unknown, however
// old: such a job waits for an operator's resolution, and the tile used to
// drop it to 0 an hour after the job was created (the counters' window),
// while router_jobs_live still counted it. Found by review.
func TestDashboardUnknownTileKeepsOldUnknownJobs(t *testing.T) {
	rb := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "primary", Timeout: 300 * time.Millisecond,
			Respond: func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} }},
	}})
	j := rb.WaitSettled(t, rb.Submit(t).ID)
	if j.State != "unknown" {
		t.Fatalf("job %s, want unknown", j.State)
	}
	tile := regexp.MustCompile(`<b>(\d+)</b><span>jobs unknown</span>`)
	if m := tile.FindStringSubmatch(dashboardPage(t, rb)); m == nil || m[1] != "1" {
		t.Fatalf("a fresh unknown job: tile %v, want 1", m)
	}
	if _, err := rb.DB.Pool.Exec(context.Background(),
		`UPDATE jobs SET created_at = created_at - interval '61 minutes' WHERE id = $1`, j.ID); err != nil {
		t.Fatal(err)
	}
	if m := tile.FindStringSubmatch(dashboardPage(t, rb)); m == nil || m[1] != "1" {
		t.Errorf("a job still unknown after an hour: the tile says %v, want 1", m)
	}
}
