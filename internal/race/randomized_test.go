package race_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// auditSQL installs, in the test's own schema, a trigger that records every
// attempt created while a sibling was starting or unknown: the blocking rule
// checked by the database itself, independent of the code under test.
const auditSQL = `
CREATE TABLE blocking_violations (attempt_id uuid, job_id uuid, at timestamptz DEFAULT now());
CREATE FUNCTION audit_blocking() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM attempts WHERE job_id = NEW.job_id AND id <> NEW.id
             AND state IN ('starting', 'unknown')) THEN
    INSERT INTO blocking_violations (attempt_id, job_id) VALUES (NEW.id, NEW.job_id);
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER audit_blocking AFTER INSERT ON attempts FOR EACH ROW EXECUTE FUNCTION audit_blocking();`

// behaviour picks a provider's answer from the seeded generator.
func behaviour(rng *rand.Rand) providers.Step {
	switch n := rng.IntN(100); {
	case n < 40:
		return providers.Step{Output: validTriage, Latency: time.Duration(rng.IntN(20)) * time.Millisecond}
	case n < 55:
		return providers.Step{Output: otherTriage, Latency: time.Duration(20+rng.IntN(40)) * time.Millisecond}
	case n < 65:
		return providers.Step{Status: 503}
	case n < 70:
		return providers.Step{Status: 429, RetryAfter: 5 * time.Millisecond}
	case n < 80:
		return providers.Step{Output: `{"category":"nope","priority":"high","summary":"Invalid category here.","needs_human":false}`}
	case n < 90:
		return providers.Step{Hang: true}
	case n < 95:
		return providers.Step{Error: &providers.Error{Kind: providers.KindContentPolicy, StatusCode: 400, Message: "flagged"}}
	default:
		return providers.Step{Output: "not json at all"}
	}
}

// Issue 4, acceptance 7: a seeded mix of submissions, duplicate keys, retries,
// hedges, timeouts, late results, cancellations and resolutions, then the
// invariants. Set RACE_SEED to replay a run.
func TestRandomizedInvariants(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RACE_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("RACE_SEED=%d", seed)
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 42))
	respond := func(int, *providers.Request) providers.Step {
		mu.Lock()
		defer mu.Unlock()
		return behaviour(rng)
	}
	b := setup(t, race.Route{HedgeAfter: 15 * time.Millisecond, KeepLosers: true, MaxInflight: 2, MaxAttempts: 4},
		provSpec{name: "p1", respond: respond, timeout: 80 * time.Millisecond, maxRetries: 1},
		provSpec{name: "p2", respond: respond, timeout: 80 * time.Millisecond, maxRetries: 1},
		provSpec{name: "p3", respond: respond, timeout: 80 * time.Millisecond},
	)
	ctx := context.Background()
	if _, err := b.db.Pool.Exec(ctx, auditSQL); err != nil {
		t.Fatal(err)
	}
	opRNG := rand.New(rand.NewPCG(seed, 7))
	const submissions = 60
	var wg sync.WaitGroup
	jobIDs := sync.Map{}
	for i := range submissions {
		key := fmt.Sprintf("k%d", opRNG.IntN(25)) // duplicates: replays of the same intent
		owner := []string{"acme", "globex"}[opRNG.IntN(2)]
		cancelSoon := opRNG.IntN(10) == 0
		wg.Go(func() {
			input := json.RawMessage(`{"subject":"` + key + `","body":"Help me please."}`)
			fp, _ := store.Fingerprint("triage", "", "", input)
			job, created, err := b.st.CreateJob(ctx, store.NewJob{Owner: owner, Operation: "triage", IdempotencyKey: key,
				Fingerprint: fp, PromptVersion: "3", Route: "default", Input: input, LeaseOwner: "test-runner", LeaseFor: 30 * time.Second})
			if err != nil {
				t.Errorf("submission %d: %v", i, err)
				return
			}
			jobIDs.Store(job.ID, owner)
			if created {
				b.runner.Submit(job)
			}
			if cancelSoon {
				_ = b.st.CancelJob(ctx, owner, job.ID)
				b.runner.Cancel(job.ID)
			}
		})
	}
	wg.Wait()
	// Drive every job to a terminal state: resolve unknown attempts, retry some failed jobs.
	for round := 0; round < 6; round++ {
		jobIDs.Range(func(k, v any) bool {
			id, owner := k.(string), v.(string)
			j := b.waitSettled(t, id)
			switch j.State {
			case store.JobUnknown:
				for _, a := range j.Attempts {
					if a.State != store.AttemptUnknown {
						continue
					}
					res := store.Resolution{Owner: owner, JobID: id, Seq: a.Seq, Outcome: "failed", Note: "randomized"}
					if opRNG.IntN(2) == 0 {
						res.Outcome, res.Result = "succeeded", json.RawMessage(validTriage)
					}
					resume, err := b.st.ResolveAttempt(ctx, res)
					// A sibling's resolution as succeeded settles the others as lost.
					if err != nil && !errors.Is(err, store.ErrStateConflict) && !errors.Is(err, store.ErrJobFinished) {
						t.Errorf("resolve %s/%d: %v", id, a.Seq, err)
					}
					if resume {
						b.runner.Submit(j)
					}
				}
			case store.JobFailed:
				if opRNG.IntN(3) == 0 && b.st.RetryJob(ctx, owner, id) == nil {
					b.runner.Submit(j)
				}
			}
			return true
		})
	}
	jobIDs.Range(func(k, _ any) bool { b.waitSettled(t, k.(string)); return true })
	b.stop()

	check := func(name, sql string) {
		var n int
		if err := b.db.Pool.QueryRow(ctx, sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d (RACE_SEED=%d)", name, n, seed)
		}
	}
	check("key scopes with more than one live job", `SELECT count(*) FROM (SELECT owner, operation, idempotency_key FROM jobs
		GROUP BY 1, 2, 3 HAVING count(*) > 1) d`)
	check("jobs with more than one winner", `SELECT count(*) FROM (SELECT job_id FROM attempts WHERE state = 'won'
		GROUP BY job_id HAVING count(*) > 1) d`)
	check("succeeded jobs whose completed_by is not their won attempt", `SELECT count(*) FROM jobs j WHERE j.state = 'succeeded'
		AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.id = j.completed_by AND a.job_id = j.id AND a.state = 'won')`)
	check("jobs with a won attempt that are not succeeded", `SELECT count(*) FROM attempts a JOIN jobs j ON j.id = a.job_id
		WHERE a.state = 'won' AND j.state <> 'succeeded'`)
	check("attempts created while a sibling was starting or unknown", `SELECT count(*) FROM blocking_violations`)
	check("lost attempts without a race event", `SELECT count(*) FROM attempts a WHERE a.state = 'lost'
		AND NOT EXISTS (SELECT 1 FROM race_events e WHERE e.attempt_id = a.id)`)
	check("attempts beyond max_attempts in a round", `SELECT count(*) FROM (SELECT a.job_id FROM attempts a JOIN jobs j ON j.id = a.job_id
		WHERE a.seq > j.attempt_base GROUP BY a.job_id HAVING count(*) > 4) d`)
	check("attempts still in flight", `SELECT count(*) FROM attempts WHERE state IN ('starting', 'running')`)

	var states string
	_ = b.db.Pool.QueryRow(ctx, `SELECT string_agg(state || '=' || n, ' ') FROM (SELECT state, count(*) n FROM attempts GROUP BY state ORDER BY state) s`).Scan(&states)
	t.Logf("attempt states: %s", states)
}
