package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func TestClassifyKeepsExistingError(t *testing.T) {
	orig := NewError("p1", KindStreamCut, "cut")
	wrapped := fmt.Errorf("attempt 3: %w", orig)
	if got := Classify("p2", wrapped); got != orig {
		t.Fatalf("got %v, want the wrapped *Error itself", got)
	}
	if Classify("p", nil) != nil {
		t.Fatal("nil error classified")
	}
}

func TestClassifyPlainErrors(t *testing.T) {
	rows := []struct {
		err     error
		kind    Kind
		action  Action
		unknown bool
	}{
		{context.Canceled, KindCancelled, ActionStop, false},
		{fmt.Errorf("post: %w", context.DeadlineExceeded), KindTimeout, ActionFailover, true},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), KindConnRefused, ActionRetry, false},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), KindConnReset, ActionRetry, false},
		{io.EOF, KindConnReset, ActionRetry, false},
		{fmt.Errorf("validate: %w", openai.ErrReasoningModelMaxTokensDeprecated), KindMisconfigured, ActionFailover, false},
		{errors.New("something odd"), KindUnknownProvider, ActionFailover, false},
		{&openai.APIError{Type: "rate_limit_error", Message: "slow down"}, KindRateLimited, ActionRetry, false},
		{&openai.APIError{Type: "invalid_request_error", Code: "context_length_exceeded", Message: "too long"}, KindContextLength, ActionFailover, false},
		{&openai.RequestError{HTTPStatusCode: 418, Body: []byte("teapot")}, KindMisconfigured, ActionFailover, false}, // an unlisted 4xx
		{&openai.RequestError{HTTPStatusCode: 402}, KindQuotaExceeded, ActionFailover, false},
		{&openai.RequestError{HTTPStatusCode: 501}, KindServerError, ActionRetry, false},
	}
	for _, r := range rows {
		e := Classify("p", r.err)
		if e.Kind != r.kind || e.Action != r.action || e.OutcomeUnknown != r.unknown || e.Provider != "p" || !errors.Is(e, r.err) {
			t.Errorf("Classify(%v) = %+v, want %s/%s unknown=%v", r.err, e, r.kind, r.action, r.unknown)
		}
	}
}

func TestClassifyStatus(t *testing.T) {
	for status, kind := range map[int]Kind{
		400: KindBadRequest, 401: KindAuth, 403: KindAuth, 404: KindModelNotFound, 408: KindRequestTimeout,
		409: KindConflict, 422: KindBadRequest, 429: KindRateLimited, 500: KindServerError, 502: KindServerError,
		503: KindUnavailable, 504: KindGatewayTimeout,
	} {
		if e := ClassifyStatus("p", status, "", ""); e.Kind != kind || e.StatusCode != status || e.Message == "" {
			t.Errorf("ClassifyStatus(%d) = %+v, want %s", status, e, kind)
		}
	}
	if e := ClassifyStatus("p", 400, "context_length_exceeded", ""); e.Kind != KindContextLength || e.Fault != FaultCaller {
		t.Errorf("context length: %+v", e)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	h := func(kv ...string) http.Header {
		x := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			x.Set(kv[i], kv[i+1])
		}
		return x
	}
	rows := []struct {
		h    http.Header
		want time.Duration
	}{
		{h(), 0},
		{h("Retry-After", "5"), 5 * time.Second},
		{h("Retry-After", "1.5"), 1500 * time.Millisecond},
		{h("Retry-After", httpDate.Format(http.TimeFormat)), 30 * time.Second},
		{h("Retry-After", "Tue, 01 Jan 2029 00:00:00 GMT"), 0},
		{h("Retry-After", "soon"), 0},
		{h("Retry-After", "-3"), 0},
		{h("retry-after-ms", "250", "Retry-After", "9"), 250 * time.Millisecond},
		{h("retry-after-ms", "junk", "Retry-After", "9"), 9 * time.Second},
	}
	for _, r := range rows {
		if got := ParseRetryAfter(http.StatusTooManyRequests, r.h, now); got != r.want {
			t.Errorf("ParseRetryAfter(%v) = %v, want %v", r.h, got, r.want)
		}
	}
}

func TestNewErrorDefaults(t *testing.T) {
	e := NewError("p", KindTimeout, "x")
	if e.Fault != FaultNetwork || e.Action != ActionFailover || !e.OutcomeUnknown {
		t.Fatalf("%+v", e)
	}
	if e := NewError("p", Kind("nope"), ""); e.Action != ActionFailover || KnownKind("nope") {
		t.Fatalf("%+v", e)
	}
	for k := range policies {
		if e := NewError("p", k, ""); e.Fault == "" || e.Action == "" {
			t.Errorf("kind %s has no defaults", k)
		}
	}
}
