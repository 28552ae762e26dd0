package race

import "time"

// SetDeadlineLeftHook has hook decide what the race takes as left of a job's
// deadline (deadlineLeftHook), given what the clock says, until restore is
// called.
func SetDeadlineLeftHook(hook func(jobID string, left time.Duration) time.Duration) (restore func()) {
	deadlineLeftHook.Store(&hook)
	return func() { deadlineLeftHook.Store(nil) }
}
