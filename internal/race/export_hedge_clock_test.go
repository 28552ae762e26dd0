package race

// SetHedgeClockHook has hook hear each time the hedge clock acts for a job
// (hedgeClockHook) until restore is called.
func SetHedgeClockHook(hook func(jobID string)) (restore func()) {
	hedgeClockHook.Store(&hook)
	return func() { hedgeClockHook.Store(nil) }
}
