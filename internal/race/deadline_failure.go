package race

import (
	"strings"

	"github.com/routerhq/router/internal/store"
)

// deadlineStopPrefix begins the error of a job its route's deadline stopped:
// the race's stop says it first (failReason), as the deadline's timer
// (deadlinePassed) and a failover refused for want of room before it
// (failoverFits) write it: "the job's deadline of 30s passed", "the job's
// deadline of 30s left no room for a failover to …".
const deadlineStopPrefix = "the job's deadline of "

// FailedByDeadline says whether a failed job was stopped by its route's
// deadline, and that deadline as its error gives it ("30s"): the API answers
// such a job as a gateway timeout, not as the providers' failure.
func FailedByDeadline(job *store.Job) (deadline string, ok bool) {
	if job == nil || job.State != store.JobFailed || job.Error == nil {
		return "", false
	}
	rest, found := strings.CutPrefix(*job.Error, deadlineStopPrefix)
	if !found {
		return "", false
	}
	deadline, _, found = strings.Cut(rest, " ")
	return deadline, found && deadline != ""
}
