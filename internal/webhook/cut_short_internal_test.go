package webhook

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Only the try's own timeout is "no answer within webhooks.timeout": the
// job's deadline running out first (the read of the event took most of it)
// says so, rather than blaming the endpoint for a wait it was not given.
func TestCutShortTellsTheTrysTimeoutFromTheJobs(t *testing.T) {
	w := NewWorker(nil, Config{Timeout: 10 * time.Second})
	own, cancel := context.WithCancelCause(context.Background())
	cancel(errNoAnswer)
	if got := w.cutShort(own).Error(); got != "no answer within 10s" {
		t.Fatalf("the try's own timeout: %q", got)
	}
	job, cancel := context.WithCancelCause(context.Background())
	cancel(context.DeadlineExceeded)
	if got := w.cutShort(job).Error(); strings.Contains(got, "within 10s") || !strings.Contains(got, "job's time (20s") {
		t.Fatalf("the job's deadline: %q, want it to say the job's time ran out", got)
	}
}
