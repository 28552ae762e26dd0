package providers

import (
	"strings"
	"testing"
)

// An operators' message is stored on the attempt and, when the job ends
// failed, becomes part of the job's `error`: it must stay true then. "The
// router retries and fails over by itself" told the owner of a failed job to
// wait for something that no longer happens (found in review: a job failed
// on rate limits said so).
func TestOperatorsMessagesStayTrueOnAFailedJob(t *testing.T) {
	for kind, msg := range operatorsMessages {
		for _, promise := range []string{"by itself", "will retry", "retries and fails over"} {
			if strings.Contains(msg, promise) {
				t.Errorf("%s: %q promises %q, untrue once the job has failed", kind, msg, promise)
			}
		}
	}
}
