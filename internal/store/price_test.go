package store_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// SPEC §18: an attempt is stored with the price its creator passes, for a
// first attempt created with its job (each row of a claim batch its own) as
// for one created later; without a price it has none and no cost_usd. Nothing
// in the database prices attempts any more (migration 0010).
func TestAttemptsStoreThePriceTheyAreCreatedWith(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	cheap, dear := &store.Price{InputPerMTok: 2, OutputPerMTok: 8}, &store.Price{InputPerMTok: 5, OutputPerMTok: 20}
	var njs []store.NewJob
	for i, p := range []*store.Price{cheap, dear, nil} {
		nj := newJob(t, "acme", "triage", "k"+string(rune('1'+i)), `{"n":1}`)
		nj.First, nj.LeaseOwner, nj.LeaseFor = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary, Price: p}, "r1", time.Minute
		njs = append(njs, nj)
	}
	jobs, created, errs := b.st.ClaimOneBatch(ctx, njs) // one statement for the three
	for i := range jobs {
		if errs[i] != nil || !created[i] {
			t.Fatalf("job %d: created=%v err=%v", i, created[i], errs[i])
		}
	}
	usage := map[string]int{"prompt_tokens": 1000, "completion_tokens": 100}
	finish := func(id string) {
		t.Helper()
		if err := b.st.FinishAttempt(ctx, id, store.AttemptOutcome{State: store.AttemptFailed, Usage: usage}); err != nil {
			t.Fatal(err)
		}
	}
	for _, j := range jobs {
		finish(j.Attempts[0].ID)
	}
	// A later attempt of the first job at another price, and of the third
	// (whose first attempt was unpriced) at none.
	for _, c := range []struct {
		job   int
		price *store.Price
	}{{0, dear}, {2, nil}} {
		a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: jobs[c.job].ID, Provider: "p", Role: store.RoleRetry, LeaseOwner: "r1", Price: c.price})
		if err != nil {
			t.Fatal(err)
		}
		finish(a.ID)
	}
	cost := func(p *store.Price) float64 { return (1000*p.InputPerMTok + 100*p.OutputPerMTok) / 1e6 }
	want := [][]*store.Price{{cheap, dear}, {dear}, {nil, nil}}
	for i, j := range jobs {
		got, err := b.st.GetJobAny(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Attempts) != len(want[i]) {
			t.Fatalf("job %d: %d attempts, want %d", i, len(got.Attempts), len(want[i]))
		}
		total := 0.0
		for k, a := range got.Attempts {
			var in, out *float64
			if err := b.db.Pool.QueryRow(ctx, `SELECT price_input_per_mtok::float8, price_output_per_mtok::float8
				FROM attempts WHERE id = $1`, a.ID).Scan(&in, &out); err != nil {
				t.Fatal(err)
			}
			p := want[i][k]
			if p == nil {
				if in != nil || out != nil || a.CostUSD != nil {
					t.Errorf("job %d attempt %d: price %v/%v cost %v, want none", i, a.Seq, in, out, a.CostUSD)
				}
				continue
			}
			if in == nil || out == nil || *in != p.InputPerMTok || *out != p.OutputPerMTok {
				t.Errorf("job %d attempt %d: price %v/%v, want %v", i, a.Seq, in, out, *p)
			}
			if a.CostUSD == nil || math.Abs(*a.CostUSD-cost(p)) > 1e-12 {
				t.Errorf("job %d attempt %d: cost %v, want %v", i, a.Seq, a.CostUSD, cost(p))
			}
			total += cost(p)
		}
		if want[i][0] == nil {
			if got.CostUSD != nil {
				t.Errorf("job %d: cost %v, want none", i, *got.CostUSD)
			}
		} else if got.CostUSD == nil || math.Abs(*got.CostUSD-total) > 1e-12 {
			t.Errorf("job %d: cost %v, want %v", i, got.CostUSD, total)
		}
	}
	if n := count(t, b, `SELECT count(*) FROM pg_trigger WHERE tgname = 'attempt_price' AND tgrelid = 'attempts'::regclass`); n != 0 {
		t.Errorf("the attempt_price trigger is still installed")
	}
	// The table stays for one release: a replica of the previous version
	// still writes it at start-up and must keep starting during a rolling
	// update (its INSERT … ON CONFLICT must still work).
	if _, err := b.db.Pool.Exec(ctx, `INSERT INTO target_prices (target, input_per_mtok, output_per_mtok) VALUES ('old', 1, 2)
		ON CONFLICT (target) DO UPDATE SET input_per_mtok = EXCLUDED.input_per_mtok`); err != nil {
		t.Errorf("a previous version's start-up write of target_prices fails: %v", err)
	}
}
