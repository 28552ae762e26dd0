package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/routerhq/router/internal/store"
)

// statementsSchema holds the tables of the statements measurement; it is
// dropped when the measurement ends.
const statementsSchema = "routerbench_statements"

// statements times the router's own two durable commits — the claim (key, job
// and first attempt) and the win — through internal/store on a schema of their
// own in the bench's database, as a lone caller's job issues them: the claim
// right after the previous job's win, the win after the provider's latency
// (res.Gap) of idle. The floor above times trivial INSERTs; the difference is
// what the statements themselves cost, which SPEC §14's "+ 1 ms" also has to
// hold. It sets res.Claim, res.Win and res.Statements from the jobs measured
// before deadline.
func (b *Bench) statements(ctx context.Context, admin *pgx.Conn, res *FloorResult, deadline time.Time) (err error) {
	if _, err := admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+statementsSchema+" CASCADE; CREATE SCHEMA "+statementsSchema); err != nil {
		return fmt.Errorf("create schema %s: %w", statementsSchema, err)
	}
	defer func() {
		if _, derr := admin.Exec(context.WithoutCancel(ctx), "DROP SCHEMA IF EXISTS "+statementsSchema+" CASCADE"); err == nil && derr != nil {
			err = fmt.Errorf("drop schema %s: %w", statementsSchema, derr)
		}
	}()
	u, err := url.Parse(b.h.DB)
	if err != nil {
		return err
	}
	q := u.Query()
	q.Set("search_path", statementsSchema)
	q.Set("synchronous_commit", "on") // as the floor's connection, whatever the server's default
	u.RawQuery = q.Encode()
	pool, err := store.Connect(ctx, u.String())
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool, store.Options{})
	if _, err := st.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate schema %s: %w", statementsSchema, err)
	}
	input := json.RawMessage(`{"text":"floor"}`)
	fp, err := store.Fingerprint("floor", "", "", input)
	if err != nil {
		return err
	}
	job := func(i int) (claim, win time.Duration, err error) {
		nj := store.NewJob{Owner: "bench", Operation: "floor", IdempotencyKey: fmt.Sprintf("floor-%d", i), Fingerprint: fp,
			PromptVersion: "1", Route: "default", Input: input, LeaseOwner: "routerbench", LeaseFor: time.Minute,
			First: &store.FirstAttempt{Provider: "primary", Model: "primary", Role: store.RolePrimary}}
		t := time.Now()
		j, created, err := st.CreateJob(ctx, nj)
		if err != nil {
			return 0, 0, fmt.Errorf("claim: %w", err)
		}
		if !created || len(j.Attempts) != 1 {
			return 0, 0, fmt.Errorf("claim of a fresh key: created %t with %d attempts", created, len(j.Attempts))
		}
		claim = time.Since(t)
		select { // the provider call between the claim and the win
		case <-time.After(res.Gap):
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		}
		t = time.Now()
		won, err := st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: j.Attempts[0].ID, ReadVersion: j.Version,
			Result: json.RawMessage(`{"ok":true}`), LatencyMS: res.Gap.Milliseconds()})
		if err != nil {
			return 0, 0, fmt.Errorf("win: %w", err)
		}
		if !won {
			return 0, 0, fmt.Errorf("the only attempt of job %s did not win", j.ID)
		}
		return claim, time.Since(t), nil
	}
	for i := range 20 { // warm-up, as for the floor: prepared statements, first pages
		if _, _, err := job(-1 - i); err != nil {
			return err
		}
	}
	var claims, wins, both []time.Duration
	for i := 0; i < res.N/2 && time.Now().Before(deadline); i++ {
		c, w, err := job(i)
		if err != nil {
			return err
		}
		claims, wins, both = append(claims, c), append(wins, w), append(both, c+w)
	}
	res.Claim, res.Win, res.Statements = newDist(claims), newDist(wins), newDist(both)
	return nil
}
