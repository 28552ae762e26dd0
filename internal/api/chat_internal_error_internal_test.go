package api

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A chat request's internal error tells both kinds of caller what to do: one
// with an Idempotency-Key resends with it; one without learns that a resend
// is a new request. Found by review.
func TestChatInternalErrorSaysWhatToDoWithAndWithoutAKey(t *testing.T) {
	s := &Server{Deps: Deps{Log: slog.New(slog.DiscardHandler)}}
	rec := httptest.NewRecorder()
	s.chatInternal(rec, httptest.NewRequest("POST", "/v1/chat/completions", nil), "create job", errors.New("database gone"))
	body := rec.Body.String()
	if rec.Code != http.StatusInternalServerError || !strings.Contains(body, "with an Idempotency-Key, resend") ||
		!strings.Contains(body, "without one, a resend is a new request") || strings.Contains(body, "database gone") {
		t.Fatalf("%d %s", rec.Code, body)
	}
}
