package localpg

import (
	"context"
	"fmt"
	"time"
)

// watchInterval is how often an attached cluster looks whether the server
// it uses still runs.
const watchInterval = 250 * time.Millisecond

// takeOverRetryMax bounds the wait between failed takeovers.
const takeOverRetryMax = 30 * time.Second

// startWatch makes an attached cluster keep its server: the process that
// started the server stops it when it stops (or dies: Pdeathsig), though
// others use it (`make run` attached to the server of a CLI command that
// then ends). When the server is gone, the watch starts it again on the same
// data directory and port, so the URL this process was given (its pool's)
// works again, and this process owns it from then on: its Stop stops it.
// Attached processes that find it restarted by another use that one. So the
// server runs while any process uses it, and the last one's Stop stops it.
func (c *Cluster) startWatch() {
	ctx, cancel := context.WithCancel(context.Background())
	c.stopWatch, c.watchDone, c.tookOver = cancel, make(chan struct{}), make(chan struct{})
	go func() {
		defer close(c.watchDone)
		c.watch(ctx)
	}()
}

// endWatch stops the watch, if any, and waits for it: a takeover under way
// is finished or undone first, so that Stop sees whether it owns a server.
func (c *Cluster) endWatch() {
	if c.stopWatch == nil {
		return
	}
	c.stopWatch()
	<-c.watchDone
}

func (c *Cluster) watch(ctx context.Context) {
	wait := watchInterval
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if livePostmaster(c.pid, c.DataDir) {
			wait = watchInterval
			continue
		}
		owned, err := c.takeOver(ctx)
		switch {
		case owned:
			c.log.Warn("the process that started the embedded PostgreSQL stopped it; this process uses it, so started it again on the same port",
				"url", c.URL, "dir", c.DataDir)
			close(c.tookOver)
			return
		case err != nil && ctx.Err() == nil:
			wait = min(2*max(wait, time.Second), takeOverRetryMax)
			c.log.Error("the embedded PostgreSQL this process uses has stopped and cannot be started again; retrying",
				"url", c.URL, "dir", c.DataDir, "retry_in", wait, "err", err)
		default:
			wait = watchInterval
		}
	}
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
