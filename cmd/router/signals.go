package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// hupNotice is where a SIGHUP is answered (a test's pipe, else stderr).
var hupNotice io.Writer = os.Stderr

// signalCounted, when not nil, is called by signalContext's goroutine with
// each signal once it has been counted and acted on — for a SIGTERM or
// Ctrl-C, the contexts it ends have ended; a SIGHUP's notice is queued, and
// its stop begins once the notice is written — so that a test can wait for
// that, not sleep. Set it before signalContext.
var signalCounted func(os.Signal)

// signalNow is the clock signalContext times its signals by (a test's, to
// space them without waiting). Set it before signalContext.
var signalNow = time.Now

// sameStop is how soon after the first SIGTERM or Ctrl-C another one is
// taken as the same stop, not as the second signal: a stop sent to a process
// group (GNU timeout, `kill -- -PGID`, tini -g) reaches the router twice — as
// the child, then as a member of the group — and one Ctrl-C under `router
// localdb -- router serve` reaches it as the terminal's SIGINT and as the
// SIGTERM localdb forwards, all within milliseconds. Counted, each of them
// skipped the drain the operator asked for. An operator who will not wait
// presses again; the notice says so.
const sameStop = 500 * time.Millisecond

// signalContext is the context main runs a command in. It ends at the first
// SIGTERM or Ctrl-C; the second (not one that came with the first: sameStop)
// ends secondSignal's context, for a command
// whose stop may take long (serve's drain) and that an operator who will not
// wait can cut short. Later signals are ignored, as long as the command runs.
// stop releases the signals.
//
// SIGPIPE is caught for good (and nothing is done with it): when the reader of
// the router's log is gone (`make run | tee` in a terminal that closed), a
// write to stderr fails with EPIPE, and Go's runtime would otherwise kill the
// process by SIGPIPE at the first log line — SIGHUP's notice, or the drain's —
// skipping the drain. Caught, the write fails and the router goes on stopping.
// Caught, not ignored: an ignored signal stays ignored across exec, and
// `router localdb -- COMMAND` would start its command (make, a shell's
// `producer | head`) with SIGPIPE ignored, so its pipelines would no longer
// end quietly when their reader stops; a caught one is reset to its default
// in the child.
//
// SIGHUP counts as the first signal — a graceful stop — and is answered with
// a notice: its default action ends the process at once, so a terminal
// closing (or a `kill -HUP` sent out of the habit of reloading a server's
// configuration) skipped serve's drain and left its attempts to recovery. The
// router reads its configuration only at start: a supervisor restarting it
// applies a change. It never counts towards the second signal: once the
// router is stopping, a SIGHUP is only answered with a notice, and after a
// SIGHUP it still takes two SIGTERMs or Ctrl-Cs to stop at once. An operator
// who pressed Ctrl-C and then closed the terminal, or a supervisor sending
// SIGTERM to a router a SIGHUP already stops, asked for a graceful stop
// twice, not for one at once — which cuts every attempt in flight, those
// still silent left unknown (SPEC §17).
//
// A SIGHUP or Ctrl-C that the router was started ignoring (`nohup router
// serve &`, a script's background job) stays ignored: Notify would install a
// handler and end the ignoring (os/signal), and a closing terminal would then
// stop a router started precisely so that it would not.
func signalContext() (ctx context.Context, stop func()) {
	// Never stopped: SIGPIPE stays caught for the life of the process.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	sigs := make(chan os.Signal, 2) // two signals in quick succession are both seen
	signal.Notify(sigs, syscall.SIGTERM)
	if !signal.Ignored(os.Interrupt) {
		signal.Notify(sigs, os.Interrupt)
	}
	hup := make(chan os.Signal, 1)
	if !signal.Ignored(syscall.SIGHUP) {
		signal.Notify(hup, syscall.SIGHUP)
	}
	// The first context's cause is the signal that ended it (stoppedBy).
	first, cancelFirst := context.WithCancelCause(context.Background())
	second, cancelSecond := context.WithCancel(context.Background())
	done := make(chan struct{})
	// The notices are written on their own goroutine, in order: a write to a
	// stderr nobody reads can block, and the signals must still be counted.
	// A notice's then runs once it is written (or could not be).
	type note struct {
		text string
		then func()
	}
	notices := make(chan note, 4)
	go func() {
		for {
			select {
			case n := <-notices:
				fmt.Fprintln(hupNotice, n.text)
				if n.then != nil {
					n.then()
				}
			case <-done:
				return
			}
		}
	}()
	notice := func(n note) {
		select {
		case notices <- n:
		default: // the writer is stuck: the notice is lost, not what follows it
			if n.then != nil {
				n.then()
			}
		}
	}
	// One goroutine counts the signals, so which came first is the order it
	// sees them in. Only SIGTERMs and Ctrl-Cs count towards the second
	// signal: a SIGHUP before them began the graceful stop, and the first
	// SIGTERM after it (systemd's stop, a supervisor's, an operator's kill)
	// asks for that same stop, not for one at once.
	counted := signalCounted // read once: a test sets it before, and restores it after
	clock := signalNow       // likewise
	go func() {
		terms := 0            // the SIGTERMs and Ctrl-Cs counted
		var firstAt time.Time // when the first of them came
		stopping := false     // the graceful stop was asked for, by any of the three
		for {
			var sig os.Signal
			select {
			case sig = <-sigs:
				now := clock()
				if terms == 1 && now.Sub(firstAt) < sameStop {
					notice(note{text: "router: " + signalName(sig) + " ignored: it came with the first stop signal " +
						"(a stop sent to the process group reaches the router twice) and is taken as the same graceful stop; " +
						"send another to stop at once"})
					break
				}
				if terms == 0 {
					firstAt = now
				}
				terms++
				stopping = true
				// Each of them ends the first context (a SIGHUP's notice may
				// still be being written, its stop not begun yet); later
				// ones are still caught (Notify stays), so that they do not
				// kill the process mid-stop.
				cancelFirst(signalStop{sig})
				if terms >= 2 {
					cancelSecond()
				}
			case sig = <-hup:
				if stopping {
					again := "a SIGTERM or Ctrl-C, then a second one, stops it at once"
					if terms > 0 {
						again = "a second SIGTERM or Ctrl-C stops it at once"
					}
					notice(note{text: "router: SIGHUP ignored: the router is already stopping gracefully (" + again + ")"})
					break
				}
				stopping = true
				// The stop begins once the notice is written: it comes before
				// the drain's log lines.
				notice(note{text: "router: SIGHUP: stopping gracefully, as for SIGTERM (the router does not reload: " +
					"its configuration is read only at start, so a restart applies a change)", then: func() { cancelFirst(signalStop{syscall.SIGHUP}) }})
			case <-done:
				return
			}
			if counted != nil {
				counted(sig)
			}
		}
	}()
	return withSecondSignal(first, second), func() {
		signal.Stop(sigs)
		signal.Stop(hup)
		close(done)
		cancelFirst(nil)
		cancelSecond()
	}
}

// secondSignalKey is the context key of withSecondSignal's context.
type secondSignalKey struct{}

// withSecondSignal returns ctx carrying second, which ends at the second
// SIGTERM or Ctrl-C (ctx itself ends at the first).
func withSecondSignal(ctx, second context.Context) context.Context {
	return context.WithValue(ctx, secondSignalKey{}, second)
}

// secondSignal is the context that ends at the second SIGTERM or Ctrl-C, or
// one that never ends when ctx did not come from signalContext (a test's).
func secondSignal(ctx context.Context) context.Context {
	if s, ok := ctx.Value(secondSignalKey{}).(context.Context); ok {
		return s
	}
	return context.Background()
}

// signalStop is the cause of signalContext's context when a signal ended it.
type signalStop struct{ sig os.Signal }

func (s signalStop) Error() string { return "stopped by " + signalName(s.sig) }

// stoppedBy is the signal that ended ctx (signalContext's, or one derived
// from it), if one did.
func stoppedBy(ctx context.Context) (os.Signal, bool) {
	var s signalStop
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &s) {
		return s.sig, true
	}
	return nil, false
}

// stoppedError is the error of a command a signal stopped part-way (a
// conformance run interrupted): main exits 128 plus the signal's number, as a
// shell reports a process a signal ended — 130 for Ctrl-C (SIGINT), 143 for
// SIGTERM, 129 for SIGHUP — so that a script can tell "interrupted" from
// "failed" (1) and from bad usage (2).
type stoppedError struct {
	sig os.Signal // nil: ended otherwise (a test's context), counted as Ctrl-C
	err error
}

func (e stoppedError) Error() string {
	if e.sig == nil {
		return e.err.Error()
	}
	return fmt.Sprintf("%v (stopped by %s; exit status %d)", e.err, signalName(e.sig), e.exitCode())
}

func (e stoppedError) Unwrap() error { return e.err }

func (e stoppedError) exitCode() int {
	if s, ok := e.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 128 + int(syscall.SIGINT)
}

// stoppedBySignal is err as a stoppedError naming the signal that ended ctx,
// or err itself when ctx has not ended.
func stoppedBySignal(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	sig, _ := stoppedBy(ctx)
	return stoppedError{sig: sig, err: err}
}

// signalName is how a stop names sig: SIGINT (Ctrl-C), SIGTERM, SIGHUP.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT (Ctrl-C)"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}
