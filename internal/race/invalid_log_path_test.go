package race_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// An invalid output's first violation is logged with its path, and a path
// can be the output's own key (no_extra_keys): the log line is bounded, not
// as long as whatever key the model wrote (found by review: a 2,000-byte
// key went into the warning whole).
func TestInvalidOutputLogBoundsThePath(t *testing.T) {
	b := racetest.New(t, racetest.Options{})
	key := strings.Repeat("Jane Doe 4111 1111 1111 1111 ", 80)
	bad := strings.TrimSuffix(validTriage, "}") + `,"` + key + `":1}`
	r, logs := loggedRunner(t, b, race.Route{},
		racetest.Provider{Name: "primary", Respond: racetest.OK(bad)},
		racetest.Provider{Name: "fallback", Respond: racetest.OK(validTriage)})
	job := b.Create(t, "logged")
	r.Submit(job)
	if j := b.WaitSettled(t, job.ID); j.State != store.JobSucceeded || attemptBy(j, "primary") == nil ||
		attemptBy(j, "primary").State != store.AttemptInvalid {
		t.Fatalf("precondition: job %s, want the primary's output invalid and the fallback's winning", j.State)
	}
	stopRunner(r)
	logs.mu.Lock()
	out := logs.buf.String()
	logs.mu.Unlock()
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `msg="attempt output failed validation"`) {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no validation warning logged:\n%s", out)
	}
	if !strings.Contains(line, "first_path=") || len(line) > 1000 {
		t.Errorf("the validation warning is %d bytes, want the path cut (at most 1000 bytes in all): %.300q…", len(line), line)
	}
}
