package race

// SetHedgeStartedHook calls hook each time hedgeDue has started a hedge
// (hedgeStartedHook), before it returns, until restore is called.
func SetHedgeStartedHook(hook func(jobID string)) (restore func()) {
	hedgeStartedHook.Store(&hook)
	return func() { hedgeStartedHook.Store(nil) }
}
