package api

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// storeCount is the real store (a test database) counting its reads of the
// live count; when seen is set, each read reports the count it read there,
// after the read returned from the database.
type storeCount struct {
	*store.Store
	reads atomic.Int64
	seen  chan int
}

func (c *storeCount) CountLiveJobs(ctx context.Context, owner string) (int, error) {
	n, err := c.Store.CountLiveJobs(ctx, owner)
	c.reads.Add(1)
	if c.seen != nil && err == nil {
		c.seen <- n
	}
	return n, err
}

func newStoreCount(t *testing.T) *storeCount {
	t.Helper()
	return &storeCount{Store: testdb.New(t, store.Options{}).Store}
}

// commitJob commits a pending (live) job of owner in the database.
func (c *storeCount) commitJob(t *testing.T, owner, key string) {
	t.Helper()
	input := json.RawMessage(`{"k":"` + key + `"}`)
	fp, _ := store.Fingerprint("op", "", "", input)
	if _, _, err := c.CreateJob(context.Background(), store.NewJob{Owner: owner, Operation: "op", IdempotencyKey: key,
		Fingerprint: fp, Route: "default", Input: input}); err != nil {
		t.Fatal(err)
	}
}
