package race_test

import (
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// siblingEnds holds the primary's end (recorded, not yet seen by the
// orchestrator) until released, and reports the state each later attempt's
// end was stored in.
type siblingEnds struct {
	held, release chan struct{}
	ends          chan string
	mu            sync.Mutex
	seen          int
}

func (s *siblingEnds) AttemptFinished(_, _, state string, _ providers.Kind, _ time.Duration, _ providers.Usage) {
	s.mu.Lock()
	s.seen++
	first := s.seen == 1
	s.mu.Unlock()
	if first {
		close(s.held)
		<-s.release
		return
	}
	s.ends <- state
}
func (*siblingEnds) AttemptStarted(string, string) {}
func (*siblingEnds) RaceLost(string)               {}
func (*siblingEnds) HedgeStarted(string)           {}
func (*siblingEnds) JobSettled(string)             {}

// SPEC §3, §6.6, §6.7: the primary goes unknown while its hedge is in flight,
// and an operator resolves it `succeeded` while the job is still running.
// The hedge, still running, is not settled by the resolution; whichever way
// its run then ends, it ends settled — never `unknown` on the succeeded job,
// never a second win: cut by the run's watchCancel (`cancelled`); with
// keep_losers, an unknown end (no byte before its deadline) stored `lost`, or
// a late valid answer `lost`, logged as a race event and discarded.
func TestResolvedSucceededRunningSiblingEnds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		keep  bool
		after func() providers.Step // the hedge's answer, once the resolution is made; nil: it hangs until cut
		want  string
	}{
		{name: "cut", want: store.AttemptCancelled},
		{name: "unknown_end", keep: true, want: store.AttemptLost, after: func() providers.Step {
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
		{name: "late_answer", keep: true, want: store.AttemptLost, after: func() providers.Step {
			return providers.Step{Output: otherTriage}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := &siblingEnds{held: make(chan struct{}), release: make(chan struct{}), ends: make(chan string, 1)}
			hedgeCalled, resolved := make(chan struct{}), make(chan struct{})
			var once sync.Once
			hedge := hang
			if tc.after != nil {
				hedge = func(int, *providers.Request) providers.Step {
					<-resolved
					return tc.after()
				}
			}
			b := setupObserved(t, race.Route{HedgeAfter: 100 * time.Millisecond, MaxInflight: 2, MaxAttempts: 4, KeepLosers: tc.keep}, nil, obs,
				provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
					<-hedgeCalled // ends only once its hedge is in flight
					return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
						Message: "no response byte before the first-byte timeout"}}
				}},
				provSpec{name: "fallback", respond: hedge, timeout: time.Minute,
					onCall: func(int, *providers.Request) { once.Do(func() { close(hedgeCalled) }) }},
			)
			job := b.submit(t)
			<-obs.held // the primary is recorded unknown; the hedge is in flight
			if _, err := b.st.ResolveAttempt(t.Context(), store.Resolution{JobID: job.ID, Seq: 1, Outcome: "succeeded",
				Result: []byte(validTriage), Note: "operator: the provider's dashboard shows it completed"}); err != nil {
				t.Fatal(err)
			}
			close(resolved)
			got := <-obs.ends
			close(obs.release)
			if got != tc.want {
				t.Fatalf("the running hedge ended %s after the resolution, want %s", got, tc.want)
			}
			j := b.waitSettled(t, job.ID)
			a := attemptBy(j, "fallback")
			if j.State != store.JobSucceeded || j.CompletedBy == nil || *j.CompletedBy != j.Attempts[0].ID || a == nil || a.State != tc.want {
				t.Fatalf("job %s completed by %v, attempts %v: want succeeded by the resolved primary, the hedge %s",
					j.State, j.CompletedBy, attemptStates(j), tc.want)
			}
			lost := 0
			for _, e := range j.RaceEvents {
				if e.AttemptID != nil && *e.AttemptID == a.ID && e.Kind == "lost" {
					lost++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tc.want == store.AttemptLost]; lost != want {
				t.Fatalf("%d lost race event(s) for the hedge, want %d (events %+v)", lost, want, j.RaceEvents)
			}
		})
	}
}
