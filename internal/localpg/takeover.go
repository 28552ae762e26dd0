package localpg

import (
	"context"
	"fmt"
	"time"
)

// watchInterval is how often an attached cluster looks whether the server
// it uses still runs, and how long a watch waits before it starts a server
// that has just stopped again.
const watchInterval = 250 * time.Millisecond

// takeOverRetryMax bounds the wait between failed takeovers, and between
// starts of a server that keeps dying soon after it starts.
const takeOverRetryMax = 30 * time.Second

// stableRun is how long a server this process started must have run for its
// exit to be taken for a crash of a working server (started again at once),
// rather than one more of a server that dies as it starts (started again
// after a growing wait, as a failed start is).
const stableRun = time.Minute

// startWatch makes a cluster keep its server running while this process
// uses it, until Stop.
//
// The server this process started (its own, or one it took over) is its
// child: when it exits without Stop having asked (killed, crashed), the
// watch logs an error naming the server log, with what this run of the
// server last logged, and starts it again on the same data directory and
// port, so that the URL this process was given (its pool's) works again.
//
// An attached cluster's server is another process's: the process that
// started it stops it when it stops (or dies: Pdeathsig), though others use
// it (`make run` attached to the server of a CLI command that then ends).
// The watch looks every watchInterval whether it still runs; when it is
// gone, it starts it again the same way, and this process owns it from then
// on: its Stop stops it. Attached processes that find it restarted by
// another use that one. So the server runs while any process uses it, and
// the last one's Stop stops it.
//
// A start that fails is tried again after a wait that doubles up to
// takeOverRetryMax, with an error logged each time.
//
// A clean exit of the server this process started (status 0: a shutdown
// someone asked for, SIGTERM or SIGINT from systemd stopping the whole
// control group, pg_ctl stop) is no crash: the watch logs a warning and
// ends, the server is not started again.
//
// A cluster stopped (Stop) gets no watch.
func (c *Cluster) startWatch() {
	ctx, cancel := context.WithCancel(context.Background())
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		cancel()
		return
	}
	done := make(chan struct{})
	c.stopWatch, c.watchDone = cancel, done
	c.tookOver, c.restarted = make(chan struct{}), make(chan struct{})
	c.mu.Unlock()
	go func() {
		defer close(done)
		c.watch(ctx)
	}()
}

// endWatch stops the watch, if one runs, and waits for it: a start under
// way is finished or undone first, so that Stop sees whether it owns a
// server, and no start follows Stop. running: a watch ran (not one that
// ended by itself, its server shut down cleanly).
func (c *Cluster) endWatch() (running bool) {
	c.mu.Lock()
	stop, done := c.stopWatch, c.watchDone
	c.stopWatch = nil
	if stop != nil {
		stop() // under mu: the watch ends by itself (shutDown) only if not stopped
	}
	c.mu.Unlock()
	if stop == nil {
		return false
	}
	<-done
	return true
}

func (c *Cluster) watch(ctx context.Context) {
	wait := watchInterval // before the next look (attached) or start (after an exit)
	attached := true      // the server is another process's: never started by this one
	for {
		if done, since := c.own(); done != nil {
			attached = false
			select {
			case <-ctx.Done():
				return
			case <-done:
			}
			if c.waitErr == nil { // exit status 0: a shutdown someone asked for
				c.shutDown(ctx)
				return
			}
			c.exited()
			if time.Since(since) < stableRun {
				wait = backoff(wait)
			} else {
				wait = watchInterval
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if livePostmaster(c.pid, c.DataDir) {
			wait = watchInterval // still running, or another process started it again
			continue
		}
		owned, err := c.takeOver(ctx)
		switch {
		case owned && attached:
			c.log.Warn("the process that started the embedded PostgreSQL stopped it; this process uses it, so started it again on the same port",
				"url", c.shownURL(), "dir", c.DataDir)
			close(c.tookOver)
			attached = false
			c.startedAgain()
		case owned:
			c.log.Warn("started the embedded PostgreSQL again on the same port", "url", c.shownURL(), "dir", c.DataDir, "log", c.logPath)
			c.startedAgain()
		case err != nil && ctx.Err() == nil:
			wait = backoff(wait)
			c.log.Error("the embedded PostgreSQL this process uses has stopped and cannot be started again; retrying",
				"url", c.shownURL(), "dir", c.DataDir, "retry_in", wait, "log", c.logPath, "err", err)
		default:
			wait = watchInterval
		}
	}
}

// backoff is the wait after wait before the next try of a failed start.
func backoff(wait time.Duration) time.Duration {
	return min(2*max(wait, time.Second), takeOverRetryMax)
}

// own is, when this process runs the server, the channel closed when the
// server exits and when this process started it; nil when it runs none.
func (c *Cluster) own() (done <-chan struct{}, since time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return nil, time.Time{}
	}
	return c.done, c.since
}

// exited reports the unexpected exit of this process's server, with what it
// last logged, and forgets it: Started is false, and Stop has nothing to
// stop, until the watch starts it again.
func (c *Cluster) exited() {
	c.mu.Lock()
	c.cmd = nil
	c.mu.Unlock()
	c.log.Error("the embedded PostgreSQL server exited unexpectedly (killed, or it crashed); starting it again on the same port: "+
		"see its log for why",
		"log", c.logPath, "url", c.shownURL(), "dir", c.DataDir, "exit", c.waitErr,
		"last_logged", lastLines([]byte(logSince(c.logPath, c.logStart)), 20))
}

// shutDown reports that this process's server was shut down by someone
// else (exit status 0), and forgets it; the watch ends, unless endWatch has
// ended it meanwhile (then Stop or Restart deals with the server).
func (c *Cluster) shutDown(ctx context.Context) {
	c.mu.Lock()
	if ctx.Err() != nil {
		c.mu.Unlock()
		return
	}
	c.cmd, c.stopWatch = nil, nil
	c.mu.Unlock()
	c.log.Warn("the embedded PostgreSQL was shut down by someone else (a clean shutdown: SIGTERM or SIGINT, pg_ctl stop, "+
		"systemd stopping the service's processes) and is not started again: requests that need the database fail "+
		"until this process is restarted",
		"url", c.shownURL(), "dir", c.DataDir, "log", c.logPath,
		"last_logged", lastLines([]byte(logSince(c.logPath, c.logStart)), 5))
}

// startedAgain tells who waits on restarted (tests) that the watch started
// the server again.
func (c *Cluster) startedAgain() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.restarted)
	c.restarted = make(chan struct{})
}

// takeOver, the server this cluster used being gone, starts it again on
// the same data directory and port, unless another start has meanwhile
// (then the watch goes on with that one). owned: this process started it.
func (c *Cluster) takeOver(ctx context.Context) (owned bool, err error) {
	lock, err := lockDataDir(ctx, c.DataDir, true)
	if err != nil {
		return false, err
	}
	defer lock.unlock()
	if other, ok := attach(ctx, c.DataDir); ok {
		c.pid = other.pid
		if other.port != c.port {
			return false, fmt.Errorf("another process started it again on port %d, and this process's connections go to port %d: restart this process", other.port, c.port)
		}
		if other.password != c.password {
			// Given a password meanwhile (started again by this version,
			// the server of an earlier one having stopped).
			return false, fmt.Errorf("another process started it again with another password (the cluster was given one), " +
				"and this process's connections still use the old: restart this process")
		}
		return false, nil
	}
	removeStalePidFile(c.DataDir, c.log)
	if c.logFile == nil {
		f, err := openServerLog(c.logPath, c.log)
		if err != nil {
			return false, err
		}
		c.logFile = f
	}
	if err := c.launch(ctx); err != nil {
		c.mu.Lock()
		c.cmd = nil // not started: Stop has nothing to stop, Started says so
		c.mu.Unlock()
		return false, err
	}
	return true, nil
}
