package webhookverify_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/routerhq/router/docs/examples/webhookverify"
	"github.com/routerhq/router/internal/store"
)

// jobStates is a receiver's table of jobs as Handler's doc asks it to keep
// them: an event's job is applied only if its version is higher than the one
// stored for the job.
type jobStates struct {
	mu       sync.Mutex
	versions map[string]int64
	states   map[string]string
}

func (s *jobStates) handle(_ string, ev webhookverify.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.versions[ev.Job.ID]; ok && ev.Job.Version <= v {
		return nil // an older event of the job, arrived late
	}
	s.versions[ev.Job.ID], s.states[ev.Job.ID] = ev.Job.Version, ev.Job.State
	return nil
}

// Events of one job can arrive out of order: a job.unknown whose first try
// failed is redelivered after the job.succeeded of its resolution. The
// example's Event carries job.version, and a receiver applying only higher
// versions ends with the job succeeded; without it, every event looked the
// same age and the stale job.unknown won.
func TestEventsOfOneJobAreOrderedByTheJobVersion(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := func(typ, state string, version int64) []byte {
		j := &store.Job{ID: "j1", Owner: "acme", State: state, Version: version, Input: json.RawMessage(`{}`)}
		quoted, _ := json.Marshal(typ)
		return append(j.AppendJSON(append(append([]byte(`{"type":`), quoted...), `,"job":`...)), '}')
	}
	s := &jobStates{versions: map[string]int64{}, states: map[string]string{}}
	h := webhookverify.Handler(secret, s.handle)
	for _, d := range []struct {
		id   string
		body []byte
	}{
		{"evt-succeeded", body("job.succeeded", "succeeded", 3)},
		{"evt-unknown", body("job.unknown", "unknown", 2)}, // its earlier try failed
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, signedRequest(t, secret, d.id, d.body))
		if rec.Code != http.StatusNoContent {
			t.Fatalf("%s: answered %d %q", d.id, rec.Code, rec.Body.String())
		}
	}
	if s.states["j1"] != "succeeded" || s.versions["j1"] != 3 {
		t.Fatalf("the receiver holds job j1 %s at version %d, want succeeded at 3", s.states["j1"], s.versions["j1"])
	}
}
