package race_test

import (
	"sync"
	"testing"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// settlements counts every job settlement the runner reports.
type settlements struct {
	nop
	mu     sync.Mutex
	counts map[string]int
}

func (s *settlements) JobSettled(state string) {
	s.mu.Lock()
	s.counts[state]++
	s.mu.Unlock()
}

// A won job is settled once. The win is announced in memory the moment it
// commits, which also stops the job's orchestration; an orchestration that
// learns of its own win that way must not settle the job again (a wasted
// transaction per job on the success path, and a double count in metrics).
func TestWonJobIsSettledOnce(t *testing.T) {
	obs := &settlements{counts: map[string]int{}}
	b := setupObserved(t, race.Route{}, nil, obs, provSpec{name: "primary", respond: ok(validTriage)})
	const n = 20
	for range n {
		job := b.submit(t)
		if j := b.waitSettled(t, job.ID); j.State != store.JobSucceeded {
			t.Fatalf("job %s", j.State)
		}
	}
	b.stop() // every orchestration has ended
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.counts[store.JobSucceeded] != n || len(obs.counts) != 1 {
		t.Fatalf("settlements %v, want %d succeeded and nothing else", obs.counts, n)
	}
}
