package telemetry

import (
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
)

// errorLogEvery is how often at most OpenTelemetry's errors are logged: a
// collector that is down fails every batch (each OTEL_BSP_SCHEDULE_DELAY,
// 5 s by default), and one line a minute says so as well as twelve.
const errorLogEvery = time.Minute

// errorLog is OpenTelemetry's error handler while tracing is on: what the SDK
// cannot do (above all, a batch of spans the collector did not take) is
// logged as a warning on the router's log, in its format (log.format), at
// most once every errorLogEvery, the line counting the errors left out since
// the last. OpenTelemetry's default handler printed them to stderr with the
// standard library's logger, plain text beside JSON lines.
type errorLog struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time
	// prev is the handler that was global before this one, put back by
	// uninstall.
	prev otel.ErrorHandler

	mu         sync.Mutex
	last       time.Time // of the last line; zero before the first
	suppressed int       // errors not logged since the last line
}

func newErrorLog(log *slog.Logger) *errorLog {
	return &errorLog{log: log, every: errorLogEvery, now: time.Now, prev: otel.GetErrorHandler()}
}

// Handle logs err unless a line was written less than every ago; then it
// counts it.
func (e *errorLog) Handle(err error) {
	e.mu.Lock()
	now := e.now()
	if !e.last.IsZero() && now.Sub(e.last) < e.every {
		e.suppressed++
		e.mu.Unlock()
		return
	}
	suppressed := e.suppressed
	e.last, e.suppressed = now, 0
	e.mu.Unlock()
	e.log.Warn("OpenTelemetry: traces may be lost (an export failed or the SDK refused something); further errors are logged at most once a minute",
		"err", err, "suppressed", suppressed)
}

// uninstall puts the previous handler back if e is still the global one
// (SetupLogged's shutdown, once the last export is done).
func (e *errorLog) uninstall() {
	if otel.GetErrorHandler() == otel.ErrorHandler(e) {
		otel.SetErrorHandler(e.prev)
	}
}
