package store_test

import (
	"testing"

	"github.com/routerhq/router/internal/store"
)

// An unread "" (read the job, and watch it) is not replaced by a later state
// that is not final: a waiter handed "running" instead read the job without
// flagging it watched, and learnt of another replica's batched win only at
// its next re-check. A final state still replaces it. Found by review.
func TestListenerKeepsAnUnreadWakeOverANonFinalState(t *testing.T) {
	l := store.NewListener(nil, nil)
	ch, unsubscribe := l.Subscribe("job-1")
	defer unsubscribe()
	l.Publish("job-1", "")
	l.Publish("job-1", store.JobRunning)
	if v := <-ch; v != "" {
		t.Fatalf("a waiter told to watch the job got %q instead", v)
	}
	l.Publish("job-1", "")
	l.Publish("job-1", store.JobSucceeded)
	if v := <-ch; v != store.JobSucceeded {
		t.Fatalf("a final state after an unread wake: got %q, want %q", v, store.JobSucceeded)
	}
	l.Publish("job-1", store.JobRunning)
	l.Publish("job-1", store.JobFailed)
	if v := <-ch; v != store.JobFailed {
		t.Fatalf("the latest state: got %q, want %q", v, store.JobFailed)
	}
}
