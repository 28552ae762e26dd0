package telemetry

import (
	"log"
	"log/slog"
	"sync"
	"sync/atomic"
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
	msg   string        // the line's message
	every time.Duration // 0: every error is logged
	now   func() time.Time

	mu         sync.Mutex
	last       time.Time // of the last line; zero before the first
	suppressed int       // errors not logged since the last line
}

func newErrorLog(log *slog.Logger) *errorLog {
	return &errorLog{log: log, every: errorLogEvery, now: time.Now,
		msg: "OpenTelemetry: traces may be lost (an export failed or the SDK refused something); further errors are logged at most once a minute"}
}

// newSetupErrorLog is the errorLog for the errors OpenTelemetry reports
// while SetupLogged builds the exporter and the tracer provider (a sampler
// it cannot read): each logged, being few, and none holding off the first
// failed export's line, which the errorLog installed after it writes.
func newSetupErrorLog(log *slog.Logger) *errorLog {
	return &errorLog{log: log, now: time.Now,
		msg: "OpenTelemetry: an error while setting tracing up; what it names is not used as written"}
}

// errorTarget is the errorLog of the SetupLogged in force (nil: none), to
// which the package's one global handler (forwarder) sends OpenTelemetry's
// errors. OpenTelemetry's default handler, once any handler is set, forwards
// to it for the rest of the process, so putting back the handler that was
// global before would not take this one out: instead the forwarder stays, and
// shutdown empties its target.
var errorTarget atomic.Pointer[errorLog]

// forwarder is the global OpenTelemetry error handler the package installs
// once: errors go to errorTarget, or, with none, to the standard library's
// logger as OpenTelemetry's default handler writes them.
type forwarder struct{}

func (forwarder) Handle(err error) {
	if e := errorTarget.Load(); e != nil {
		e.Handle(err)
		return
	}
	log.Print(err)
}

// install makes e the target of OpenTelemetry's errors (SetupLogged), setting
// the forwarder as the global handler if it is not already.
func (e *errorLog) install() {
	errorTarget.Store(e)
	if _, ok := otel.GetErrorHandler().(forwarder); !ok {
		otel.SetErrorHandler(forwarder{})
	}
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
	e.log.Warn(e.msg, "err", err, "suppressed", suppressed)
}

// uninstall stops sending OpenTelemetry's errors to e if it is still their
// target (SetupLogged's shutdown, once the last export is done): later ones go
// where OpenTelemetry's default handler sends them.
func (e *errorLog) uninstall() {
	errorTarget.CompareAndSwap(e, nil)
}
