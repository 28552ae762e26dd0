package race

import (
	"context"
	"log/slog"
	"slices"
)

// lazyWith is l.With(args...) whose attributes are formatted only when a
// record is written. slog's With has the handler format them at once (the
// text and JSON handlers pre-render them), and the runner makes a logger for
// every job and every attempt of which almost none logs anything: measured
// at 1.3% of the router's CPU and 2.5% of the bytes it allocates under load.
func lazyWith(l *slog.Logger, args ...any) *slog.Logger {
	var r slog.Record
	r.Add(args...)
	attrs := make([]slog.Attr, 0, r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, a)
		return true
	})
	return slog.New(&lazyHandler{next: l.Handler(), attrs: attrs})
}

// lazyHandler keeps attributes and puts them first in each record it passes
// on, as the handler's own WithAttrs would have shown them.
type lazyHandler struct {
	next  slog.Handler
	attrs []slog.Attr
}

var _ slog.Handler = (*lazyHandler)(nil)

func (h *lazyHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *lazyHandler) Handle(ctx context.Context, r slog.Record) error {
	nr := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	nr.AddAttrs(h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(a)
		return true
	})
	return h.next.Handle(ctx, nr)
}

func (h *lazyHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &lazyHandler{next: h.next, attrs: append(slices.Clip(h.attrs), attrs...)}
}

// WithGroup gives the kept attributes to the handler first: they stay
// outside the group, as they were added before it.
func (h *lazyHandler) WithGroup(name string) slog.Handler {
	return h.next.WithAttrs(h.attrs).WithGroup(name)
}
