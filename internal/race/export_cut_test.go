package race

// CutDone is closed when the runner cuts its attempts (Runner.Cut turns
// true): the signal a test waits on instead of polling Cut.
func CutDone(r *Runner) <-chan struct{} { return r.base.Done() }
