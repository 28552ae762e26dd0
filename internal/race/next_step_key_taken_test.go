package race_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A failed job whose key expired and was taken over by a newer job
// (store.Job.KeyTaken) can be neither retried (409 idempotency-key-rebound)
// nor reached with its key (it holds the newer job): next_step says so, when
// the key expired, and to send the request again under a new key — corrected
// first when the provider refused it — and neither advises a retry nor says
// the key "stays bound" to it.
func TestNextStepAfterKeyTaken(t *testing.T) {
	expired := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	job := func(key string, attempts ...store.Attempt) *store.Job {
		return &store.Job{ID: "0190a23b-58d9-7d14-b84d-99dabf56969c", State: store.JobFailed, Operation: "triage",
			IdempotencyKey: key, KeyExpiresAt: &expired, KeyTaken: true, Attempts: attempts}
	}
	refused := store.Attempt{Seq: 1, FinishedAt: &expired, Error: json.RawMessage(`{"kind":"bad_request","fault":"caller"}`)}
	chatJob := job("auto-0190a23b-58d9-7d14-b84d-99dabf56969d")
	chatJob.Operation = "chat:default"
	for _, c := range []struct {
		name      string
		job       *store.Job
		say, deny []string
	}{
		{"plain", job("k-1"), []string{`Idempotency-Key "k-1" expired at 2031-05-06T07:08:09Z and now holds another request's job`,
			"cannot be retried or attached to: send the request again with a new Idempotency-Key"}, nil},
		{"caller fault", job("k-2", refused), []string{`Idempotency-Key "k-2" expired at 2031-05-06T07:08:09Z`,
			"correct the request (the provider refused it itself) and send it again with a new Idempotency-Key"}, nil},
		{"keyless chat", chatJob, []string{"its key expired at 2031-05-06T07:08:09Z", "send the request again as a new job"},
			[]string{"Idempotency-Key"}},
	} {
		step := race.NextStep(c.job)
		for _, s := range c.say {
			if !strings.Contains(step, s) {
				t.Errorf("%s: next_step does not say %q:\n%s", c.name, s, step)
			}
		}
		for _, s := range append(c.deny, "/retry", "same Idempotency-Key", "stays bound") {
			if strings.Contains(step, s) {
				t.Errorf("%s: next_step says %q of a job whose key was taken over:\n%s", c.name, s, step)
			}
		}
	}
	// The same job holding its key is advised a retry, as before.
	held := job("k-1")
	held.KeyTaken = false
	if step := race.NextStep(held); !strings.Contains(step, "/retry") {
		t.Errorf("a failed job that holds its key is not advised a retry:\n%s", step)
	}
}
