package store_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A caller's cancellation records an attempt still starting (created, not
// yet sent) as never sent — `cancelled`, kind not_sent, as a win records its
// starting siblings (settleSiblingsSQL) — so that the attempt view the API
// answers with says it never reached its provider; the attempt that was sent
// is a plain cancellation, and the starting one is not sent afterwards.
func TestCancelRecordsStartingAttemptNotSent(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, primary, hedge := primaryAndStartingHedge(t, b, "cancel-starting", false)
	if err := b.st.CancelJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	got, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.JobCancelled {
		t.Fatalf("job %s, want cancelled", got.State)
	}
	for _, a := range got.Attempts {
		view := new(store.Job)
		view.Attempts = []store.Attempt{a}
		body := view.AppendJSON(nil)
		switch a.ID {
		case hedge.ID:
			if a.State != store.AttemptCancelled || !store.NotSent(a) || a.FinishedAt == nil || a.LeaseOwner != nil {
				t.Fatalf("starting attempt after the cancellation: %s, error %s, finished %v, lease %v; want cancelled, not_sent, finished, no lease",
					a.State, a.Error, a.FinishedAt, a.LeaseOwner)
			}
			if !bytes.Contains(body, []byte(`"kind":"not_sent"`)) || !bytes.Contains(body, []byte(`the job was cancelled`)) {
				t.Fatalf("the attempt view of the never-sent attempt does not say so: %s", body)
			}
		case primary.ID:
			if a.State != store.AttemptCancelled || store.NotSent(a) {
				t.Fatalf("sent attempt after the cancellation: %s, error %s; want cancelled, not marked never sent", a.State, a.Error)
			}
		}
	}
	if err := b.st.MarkAttemptRunning(ctx, hedge.ID); !errors.Is(err, store.ErrStateConflict) {
		t.Fatalf("MarkAttemptRunning of the cancelled starting attempt: err = %v, want ErrStateConflict (not sending)", err)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND error->>'kind' = 'not_sent'`, hedge.ID); n != 1 {
		t.Fatal("the refused send changed the never-sent record")
	}
}
