package chaos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// load is steady, bounded traffic: workers, each sending one intent per
// interval (and waiting for it), so the offered load never grows with faults.
type load struct {
	c        *client
	workers  int
	interval time.Duration
	seed     uint64 // with the worker's number, seeds each worker's choices
	seq      atomic.Int64

	mu   sync.Mutex
	past []intent // settled intents, re-sent now and then as replays
}

func (ld *load) next(rng *rand.Rand, chat bool) intent {
	n := ld.seq.Add(1)
	in := intent{owner: rng.IntN(len(owners)), chat: chat}
	if chat {
		in.key = fmt.Sprintf("chaos-chat-%d", n)
		in.body = fmt.Sprintf(`{"model":"default","messages":[{"role":"user","content":"chaos chat %d: summarise the ticket"}]}`, n)
	} else {
		in.key = fmt.Sprintf("chaos-job-%d", n)
		in.body = fmt.Sprintf(`{"prompt":"triage","input":{"subject":"chaos ticket %d","body":"Please help, I cannot log in."}}`, n)
	}
	return in
}

// run drives the load until ctx ends and returns once every worker stopped.
func (ld *load) run(ctx context.Context) {
	var wg sync.WaitGroup
	for w := range ld.workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(ld.seed, uint64(w)))
			tick := time.NewTicker(ld.interval)
			defer tick.Stop()
			for ctx.Err() == nil {
				ld.step(ctx, rng)
				select {
				case <-ctx.Done():
				case <-tick.C:
				}
			}
		})
	}
	wg.Wait()
}

// step sends one intent: mostly new jobs, some sent three times at once to
// three replicas, some replays of settled intents, some chat completions
// (a few of them sent twice at once).
func (ld *load) step(ctx context.Context, rng *rand.Rand) {
	first := rng.IntN(len(ld.c.bases))
	var in intent
	copies := 1
	switch p := rng.IntN(100); {
	case p < 55:
		in = ld.next(rng, false)
	case p < 70:
		in, copies = ld.next(rng, false), 3
	case p < 80:
		ld.mu.Lock()
		if len(ld.past) == 0 {
			ld.mu.Unlock()
			return
		}
		in = ld.past[rng.IntN(len(ld.past))]
		ld.mu.Unlock()
	case p < 95:
		in = ld.next(rng, true)
	default:
		in, copies = ld.next(rng, true), 2
	}
	ld.c.l.intents.Add(1)
	var wg sync.WaitGroup
	for i := range copies {
		wg.Go(func() { ld.c.send(ctx, in, first+i) })
	}
	wg.Wait()
	ld.mu.Lock()
	if len(ld.past) < 1000 {
		ld.past = append(ld.past, in)
	} else {
		ld.past[rng.IntN(len(ld.past))] = in
	}
	ld.mu.Unlock()
}
