package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// cutRequestsWait bounds how long the shutdown waits, once it has cut the
// tenant requests still open at the end of shutdown.http, for their handlers
// to return (awaitCut). http.Server's Close cancels their contexts and closes
// their connections but does not wait for them, and a cut handler may still
// be writing: a job claim already sent to the database (store.CreateJob does
// not give up a claim its caller went away from) whose job, created a moment
// later, this stopping replica hands over — its first attempt recorded
// `cancelled` not_sent and its lease released (race's handOver, a write
// bounded to 5 s). Closing the pool under it left the attempt `running`
// under this replica's lease, to expire into `unknown`. Twice the hand-over's
// bound, as the runner's StopGrace waits for job runs to record their ends;
// it runs beside the drain.
const cutRequestsWait = 10 * time.Second

// onAwaitCut, in tests, runs as the shutdown starts waiting for cut tenant
// handlers still running (SetOnAwaitCut).
var onAwaitCut func()

// openRequests counts the handlers of a listener that are running, so that
// the shutdown can wait for those it cut (awaitCut).
type openRequests struct {
	mu    sync.Mutex
	n     int
	empty []chan struct{} // closed when n drops to 0
}

// wrap is h counted while it runs.
func (o *openRequests) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.add(1)
		defer o.add(-1)
		h.ServeHTTP(w, r)
	})
}

func (o *openRequests) add(d int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n += d
	if o.n == 0 {
		for _, c := range o.empty {
			close(c)
		}
		o.empty = nil
	}
}

// count is how many handlers run now.
func (o *openRequests) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n
}

// idle is closed once no handler runs; n is how many run now.
func (o *openRequests) idle() (done <-chan struct{}, n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := make(chan struct{})
	if o.n == 0 {
		close(c)
		return c, 0
	}
	o.empty = append(o.empty, c)
	return c, o.n
}

// awaitCut waits, after the tenant listener's shutdown (shutdownWithin), for
// the handlers it cut to return: up to cutRequestsWait, or until now ends (a
// second signal: Options.StopNow). Past it, those still running are logged
// and the shutdown goes on without them (the database is closed under them:
// what they still write fails, and a job one of them creates is left to its lease).
func awaitCut(o *openRequests, now context.Context, log *slog.Logger) {
	done, n := o.idle()
	if n == 0 {
		return
	}
	if onAwaitCut != nil {
		onAwaitCut()
	}
	if now == nil {
		now = context.Background()
	}
	t := time.NewTimer(cutRequestsWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		n = o.count()
		log.Error("tenant requests cut at shutdown still running after waiting for them; going on without them: a job one of them still creates is left to its lease (recovery takes it over once it expires)",
			"requests", n, "waited", cutRequestsWait)
	case <-now.Done():
		n = o.count()
		log.Warn("second signal: no longer waiting for the tenant requests cut at shutdown", "requests", n)
	}
}
