package race_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
)

// passLeader is a Leader that always leads and closes third when asked the
// third time: RunRecovery asks before each pass, so two whole passes have
// run by then.
type passLeader struct {
	asked atomic.Int32
	third chan struct{}
}

func (l *passLeader) IsLeader() bool {
	if l.asked.Add(1) == 3 {
		close(l.third)
	}
	return true
}

// A job whose unknown attempt is on a target the recovery leader does not
// configure (a deploy removed it) is never looked up by reconciliation,
// which lists only the leader's targets; nothing said so, and the job stayed
// unknown with no log line. The leader now warns about it, once per attempt
// however many passes list it, naming the job, the attempt and its target
// and how to end it. Found by review (rrecov12, suspicion 2).
func TestReconcileWarnsOnceAboutAnUnconfiguredTarget(t *testing.T) {
	b, job, j := unknownOnHangingPrimary(t, validTriage)
	logs := &logBuffer{}
	// The new leader, after a deploy that removed "primary".
	leader := racetest.New(t, racetest.Options{DB: b.db, LeaseOwner: "new-leader",
		Log:       slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Providers: []racetest.Provider{{Name: "fallback", Respond: racetest.OK(validTriage)}}})
	lead := &passLeader{third: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		leader.Runner.RunRecovery(ctx, race.RecoveryConfig{Interval: time.Millisecond, Leader: lead})
	}()
	select {
	case <-lead.third:
	case <-time.After(3 * time.Minute): // a hang guard, not a timing assertion
		t.Fatal("recovery never ran two passes")
	}
	cancel()
	<-done

	logs.mu.Lock()
	out := logs.buf.String()
	logs.mu.Unlock()
	var warned []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "on a target this router does not configure") && strings.Contains(line, j.Attempts[0].ID) {
			warned = append(warned, line)
		}
	}
	if len(warned) != 1 {
		t.Fatalf("warned %d times about the unknown attempt on the unconfigured target over two passes, want once; log:\n%s", len(warned), out)
	}
	for _, want := range []string{"level=WARN", "job_id=" + job.ID, "target=primary", "seq=1",
		"POST /v1/jobs/" + job.ID + "/attempts/1/resolve", "/cancel"} {
		if !strings.Contains(warned[0], want) {
			t.Fatalf("the warning lacks %q: %s", want, warned[0])
		}
	}
}
