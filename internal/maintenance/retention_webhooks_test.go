package maintenance_test

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// expiringStore is the real store, telling the test when the cleaner's pass
// asked it to end removed webhooks past their window.
type expiringStore struct {
	*store.Store
	asked chan bool
}

func (s expiringStore) ExpireRemovedWebhooks(ctx context.Context) (bool, error) {
	ended, err := s.Store.ExpireRemovedWebhooks(ctx)
	if err == nil {
		s.asked <- ended
	}
	return ended, err
}

// Each retention pass also ends the places kept for removed webhooks past
// their redelivery window, so an owner's stored key's webhook takes over then
// rather than at the next replica start.
func TestCleanerEndsRemovedWebhooksPastTheirWindow(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if _, err := db.Store.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: "acme", WebhookURL: "https://stored.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://served.example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE webhook_owners SET removed_until = now() - interval '1 second' WHERE owner = 'acme'`); err != nil {
		t.Fatal(err)
	}
	st := expiringStore{Store: db.Store, asked: make(chan bool, 1)}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&maintenance.Cleaner{Store: st}).Run(runCtx)
	}()
	ended := <-st.asked
	cancel()
	<-done
	if !ended {
		t.Fatal("the cleaner's pass ended no removed webhook, with one past its window")
	}
	if w, err := db.Store.WebhookFor(ctx, "acme"); err != nil || w.URL != "https://stored.example.com/hook" {
		t.Fatalf("after the pass acme's webhook: %+v (%v), want the stored key's", w, err)
	}
}
