package race

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"
)

// A logger made by lazyWith writes exactly what l.With would have: the same
// attributes, first and in order, through further With calls and groups, at
// the handler's level only.
func TestLazyWithWritesWhatWithWould(t *testing.T) {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	var eager, lazy bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelWarn, ReplaceAttr: noTime}
	want := slog.New(slog.NewTextHandler(&eager, opts))
	got := slog.New(slog.NewTextHandler(&lazy, opts))
	args := []any{"job_id", "j1", "seq", 2, slog.Bool("sole", true)}
	for _, log := range []struct {
		l   *slog.Logger
		buf *bytes.Buffer
	}{{want.With(args...), &eager}, {lazyWith(got, args...), &lazy}} {
		l := log.l
		l.Info("not written: below the level", "x", 1)
		l.Warn("attempt ended", "kind", "timeout", "err", errors.New("boom"))
		l = l.With("owner", "acme")
		l.Error("could not record", "err", "x")
		l.WithGroup("g").With("in", 1).Warn("grouped", "y", 2)
	}
	if eager.Len() == 0 || lazy.String() != eager.String() {
		t.Fatalf("lazyWith wrote\n%s\nWith wrote\n%s", lazy.String(), eager.String())
	}
}
