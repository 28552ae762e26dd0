package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/jsontext"
	"github.com/routerhq/router/internal/store"
)

// A job whose input PostgreSQL refuses as data (a number beyond numeric's
// range: SQLSTATE 22003) is ErrUnstorable, not an internal error a resend
// with the same key would meet for ever, and its claim leaves nothing behind —
// no key, job or first attempt — in a batch with other claims too, which are
// created as if it were not there. The corrected request then claims the key.
func TestClaimOfUnstorableInputWritesNothing(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	first := func() *store.FirstAttempt {
		return &store.FirstAttempt{Provider: "p1", Model: "m1", Role: store.RolePrimary, Routing: []byte(`[{"provider":"p1","eligible":true}]`)}
	}
	good := newJob(t, "acme", "triage", "good", `{"n":1}`)
	bad := newJob(t, "acme", "triage", "huge", `{"n":1e400000}`)
	good.First, good.LeaseOwner = first(), "replica-a"
	bad.First, bad.LeaseOwner = first(), "replica-a"
	jobs, created, errs := b.st.ClaimOneBatch(ctx, []store.NewJob{good, bad, bad})
	if errs[0] != nil || !created[0] || len(jobs[0].Attempts) != 1 {
		t.Fatalf("the good claim beside an unstorable one: created=%v err=%v", created[0], errs[0])
	}
	for i := 1; i <= 2; i++ {
		var u *store.UnstorableError
		if !errors.Is(errs[i], store.ErrUnstorable) || !errors.As(errs[i], &u) || u.Code != "22003" {
			t.Fatalf("claim %d of the unstorable input: err=%v, want ErrUnstorable with SQLSTATE 22003", i, errs[i])
		}
	}
	if _, _, err := b.st.CreateJob(ctx, bad); !errors.Is(err, store.ErrUnstorable) || !strings.Contains(err.Error(), "value overflows numeric format") {
		t.Fatalf("CreateJob of the unstorable input alone: %v, want ErrUnstorable naming PostgreSQL's reason", err)
	}
	for what, q := range map[string]string{
		"keys":     `SELECT count(*) FROM idempotency_keys WHERE idempotency_key = 'huge'`,
		"jobs":     `SELECT count(*) FROM jobs WHERE idempotency_key = 'huge'`,
		"attempts": `SELECT count(*) FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE j.idempotency_key = 'huge'`,
	} {
		if n := count(t, b, q); n != 0 {
			t.Errorf("%s left by the refused claim: %d, want 0", what, n)
		}
	}
	if n := count(t, b, `SELECT count(*) FROM attempts`); n != 1 {
		t.Errorf("attempts = %d, want 1 (the good claim's)", n)
	}
	fixed := newJob(t, "acme", "triage", "huge", `{"n":1e4000}`)
	if _, created, err := b.st.CreateJob(ctx, fixed); err != nil || !created {
		t.Fatalf("the corrected request under the same key: created=%v err=%v", created, err)
	}
}

// jsontext.CheckNumericRange refuses exactly the numbers this PostgreSQL refuses in
// jsonb: every combination of digits before and after the point and exponents
// at and around numeric's limits.
func TestNumberRangeAgreesWithPostgreSQL(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	z := strings.Repeat
	ints := []string{"0", "-0", "1", "-9", "10", "1" + z("0", 65535), "1" + z("0", 131071), "1" + z("0", 131072)}
	fracs := []string{"", ".5", ".0", "." + z("0", 16382) + "1", "." + z("0", 16383) + "1", ".1" + z("0", 16382), ".1" + z("0", 16383)}
	exps := []string{"", "e0", "E+1", "e-1", "e-16382", "e-16383", "e-16384", "e65535", "e65536", "e131070", "e131071", "e131072",
		"e1073741822", "e1073741823", "e-1073741822", "e-1073741823", "e00000000000000000001", "e99999999999999999999"}
	var nums []string
	for _, i := range ints {
		for _, f := range fracs {
			for _, e := range exps {
				nums = append(nums, i+f+e)
			}
		}
	}
	conn, err := b.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `CREATE FUNCTION pg_temp.storable(t text) RETURNS bool LANGUAGE plpgsql AS $$
		BEGIN PERFORM t::jsonb; RETURN true; EXCEPTION WHEN data_exception THEN RETURN false; END $$`); err != nil {
		t.Fatal(err)
	}
	var storable []bool
	if err := conn.QueryRow(ctx, `SELECT array_agg(pg_temp.storable(n) ORDER BY o) FROM unnest($1::text[]) WITH ORDINALITY AS u(n, o)`, nums).Scan(&storable); err != nil {
		t.Fatal(err)
	}
	for i, n := range nums {
		if e := jsontext.CheckNumericRange([]byte(n)); (e == nil) != storable[i] {
			t.Errorf("%.30s… (%d bytes): PostgreSQL stores it: %v; CheckNumericRange: %v", n, len(n), storable[i], e)
		}
	}
}
