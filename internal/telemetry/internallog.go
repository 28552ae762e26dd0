package telemetry

import (
	"fmt"
	"strings"

	"github.com/go-logr/logr"
)

// errorSink is OpenTelemetry's internal logger (otel.SetLogger) once
// SetupLogged ran: what OpenTelemetry reports there as an error — the OTLP
// exporter, for a variable it cannot use and drops while it is built — goes
// where its error handler's errors go (forwarder: the router's log while
// tracing is on, in its log.format), not to stderr as plain text.
// Informational, warning and debug lines are dropped, as OpenTelemetry's
// default internal logger (stdr at verbosity 0) drops them.
type errorSink struct {
	name   string
	values []any
}

var _ logr.LogSink = errorSink{}

func (errorSink) Init(logr.RuntimeInfo)    {}
func (errorSink) Enabled(int) bool         { return false }
func (errorSink) Info(int, string, ...any) {}

// Error hands err, msg and the key-value pairs with it to the forwarder as
// one error: "msg (key=value …): err".
func (s errorSink) Error(err error, msg string, keysAndValues ...any) {
	var b strings.Builder
	if s.name != "" {
		b.WriteString(s.name + ": ")
	}
	b.WriteString(msg)
	kv := append(append([]any(nil), s.values...), keysAndValues...)
	if len(kv) > 0 {
		b.WriteString(" (")
		for i := 0; i+1 < len(kv); i += 2 {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%v=%v", kv[i], kv[i+1])
		}
		b.WriteByte(')')
	}
	if err == nil {
		forwarder{}.Handle(fmt.Errorf("%s", b.String()))
		return
	}
	forwarder{}.Handle(fmt.Errorf("%s: %w", b.String(), err))
}

func (s errorSink) WithValues(keysAndValues ...any) logr.LogSink {
	s.values = append(append([]any(nil), s.values...), keysAndValues...)
	return s
}

func (s errorSink) WithName(name string) logr.LogSink {
	if s.name != "" {
		name = s.name + "/" + name
	}
	s.name = name
	return s
}
