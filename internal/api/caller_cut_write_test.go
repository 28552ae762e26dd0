package api_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/api"
)

// brokenWriter is a connection the caller has left: the headers go, every
// write of the body fails.
type brokenWriter struct {
	header http.Header
	status int
}

func (w *brokenWriter) Header() http.Header         { return w.header }
func (w *brokenWriter) WriteHeader(code int)        { w.status = code }
func (w *brokenWriter) Write(b []byte) (int, error) { return 0, errors.New("write: broken pipe") }

// A caller that left while its answer was being written was logged as a
// plain 200, as one that got the whole answer: the access-log line now says
// caller_left=true beside the status its headers carried. Found by review.
func TestCallerLeavingMidAnswerIsLogged(t *testing.T) {
	logs := &lockedBuffer{}
	b := setup(t, options{logs: logs})
	for _, c := range []struct {
		id   string
		w    http.ResponseWriter
		left bool
	}{
		{"left-1", &brokenWriter{header: http.Header{}}, true},
		{"stayed-1", httptest.NewRecorder(), false},
	} {
		req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		req.Header.Set(api.RequestIDHeader, c.id)
		b.srv.Config.Handler.ServeHTTP(c.w, req)
		line := accessLine(logs, c.id)
		if !strings.Contains(line, "status=200") || strings.Contains(line, "caller_left=true") != c.left {
			t.Errorf("%s: access-log line %q, want status=200 and caller_left=true only when the write failed", c.id, line)
		}
	}
}
