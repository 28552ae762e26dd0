package race_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// logBuffer is a log destination safe for concurrent writers.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// endLines are the lines that log an attempt's end without an answer.
func (l *logBuffer) endLines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if strings.Contains(line, `msg="attempt ended without an answer"`) {
			out = append(out, line)
		}
	}
	return out
}

// loggedRunner is a runner on b's database whose log, at debug, goes to the
// returned buffer; it runs jobs made with b.Create(t, "logged").
func loggedRunner(t *testing.T, b *racetest.Bundle, route race.Route, ps ...racetest.Provider) (*race.Runner, *logBuffer) {
	t.Helper()
	prompts, err := prompt.LoadDir(racetest.PromptsDir())
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]*race.Target{}
	for _, p := range ps {
		sp := providers.NewScripted(providers.ScriptedConfig{Name: p.Name, Model: p.Name + "-model", Respond: p.Respond, OnCall: p.OnCall})
		targets[p.Name] = &race.Target{Provider: sp, Model: p.Name + "-model", ContextWindow: 128000, Timeout: time.Minute}
		route.Providers = append(route.Providers, p.Name)
	}
	route.MaxInflight, route.MaxAttempts = 2, 4
	logs := &logBuffer{}
	r := race.New(race.Config{
		Store: b.Store, Listener: b.Listener, Prompts: prompts, Targets: targets,
		Routes: map[string]*race.Route{"default": &route}, LeaseOwner: "logged", Lease: 30 * time.Second,
		Log:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Backoff: race.Backoff{Base: time.Millisecond, Cap: 5 * time.Millisecond},
	})
	t.Cleanup(func() { r.Stop(context.Background()) })
	return r, logs
}

// stopRunner waits for every job run of r to end.
func stopRunner(r *race.Runner) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r.Stop(ctx)
}

// With hedging on (the default), every hedged job has a loser the router
// cancels when the other attempt wins: that is the router's own doing, not a
// provider's failure, and it was logged at WARN ("attempt ended without an
// answer", state cancelled) — a warning per hedged job on a healthy router.
// It is logged at debug. Found by review.
func TestCancelledHedgeLoserIsNotAWarning(t *testing.T) {
	b := racetest.New(t, racetest.Options{})
	r, logs := loggedRunner(t, b, race.Route{HedgeAfter: 20 * time.Millisecond},
		racetest.Provider{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Latency: time.Minute, Output: validTriage}
		}},
		racetest.Provider{Name: "fallback", Respond: racetest.OK(validTriage)})
	job := b.Create(t, "logged")
	r.Submit(job)
	j := b.WaitSettled(t, job.ID)
	stopRunner(r) // the loser's end has been logged
	if p := attemptBy(j, "primary"); j.State != store.JobSucceeded || p == nil {
		t.Fatalf("precondition: job %s, want it won by the hedge beside the primary", j.State)
	}
	lines := logs.endLines()
	if len(lines) != 1 || !strings.Contains(lines[0], "provider=primary") || !strings.Contains(lines[0], "state=cancelled") {
		t.Fatalf("want one end line, the primary's (cancelled); got %q", lines)
	}
	if !strings.Contains(lines[0], "level=DEBUG") {
		t.Errorf("the hedge loser the router cancelled is logged %q, want it at DEBUG", lines[0])
	}
}

// An attempt of a job its caller cancelled is the router's stop too: info,
// not a warning.
func TestAttemptOfACancelledJobIsNotAWarning(t *testing.T) {
	b := racetest.New(t, racetest.Options{})
	called := make(chan struct{})
	r, logs := loggedRunner(t, b, race.Route{},
		racetest.Provider{Name: "primary", Respond: racetest.Hang, OnCall: func(int, *providers.Request) { close(called) }})
	job := b.Create(t, "logged")
	r.Submit(job)
	<-called
	if err := b.Store.CancelJob(context.Background(), job.Owner, job.ID); err != nil {
		t.Fatal(err)
	}
	stopRunner(r)
	lines := logs.endLines()
	if len(lines) != 1 || !strings.Contains(lines[0], "state=cancelled") {
		t.Fatalf("want one end line (cancelled); got %q", lines)
	}
	if !strings.Contains(lines[0], "level=INFO") {
		t.Errorf("the attempt of a cancelled job is logged %q, want it at INFO", lines[0])
	}
}

// A provider's failure stays a warning.
func TestProviderFailureIsStillAWarning(t *testing.T) {
	b := racetest.New(t, racetest.Options{})
	r, logs := loggedRunner(t, b, race.Route{},
		racetest.Provider{Name: "primary", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 503} }},
		racetest.Provider{Name: "fallback", Respond: racetest.OK(validTriage)})
	job := b.Create(t, "logged")
	r.Submit(job)
	if j := b.WaitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Fatalf("precondition: job %s, want it won by the fallback", j.State)
	}
	stopRunner(r)
	lines := logs.endLines()
	if len(lines) != 1 || !strings.Contains(lines[0], "provider=primary") || !strings.Contains(lines[0], "state=failed") {
		t.Fatalf("want one end line, the primary's (failed); got %q", lines)
	}
	if !strings.Contains(lines[0], "level=WARN") {
		t.Errorf("a provider's 503 is logged %q, want it at WARN", lines[0])
	}
}
