package endtoend_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/providers/trickle"
	"github.com/routerhq/router/internal/race"
)

// SPEC §15: an attempt is unknown only when no response byte came before the
// first-byte deadline. A target that sent its status line at once and then
// trickled its header lines past first_byte_timeout ended unknown (no
// response byte within first_byte_timeout), and the job waited for a
// resolution though the provider had answered bytes. Now the attempt's
// timeout cuts it as a known failure (stream_timeout) and the job fails over
// to the next target, whose answer the caller gets.
//
// The attempt's deadline passes once the status line's first byte came
// (cutAtResponseByte): a first_byte_timeout of 300 ms and a timeout of 1.5 s
// raced the connection, and under load the first passed before the status
// line was sent (unknown) or the second before it came. That the first-byte
// deadline stops at the status line is TestTrickledHeadersAreAKnownFailure's.
func TestTrickledHeadersFailOver(t *testing.T) {
	adapter, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "slow", BaseURL: trickle.Server(t, "HTTP/1.1 200 OK\r\n", "X-Trickle: still coming\r\n", 20*time.Millisecond), APIKey: "sk-test",
		Model: "gpt-test", Stream: true, FirstByteTimeout: time.Hour, Timeout: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	slow := newCutAtResponseByte(adapter)
	whole := openAIStream(t,
		`{"id":"gen-2","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"Unplug it, wait ten seconds, plug it back in."},"finish_reason":"stop"}]}`,
		"[DONE]")
	srv, db := serve(t, map[string]*race.Target{
		"slow": {Provider: slow, Model: "gpt-test", ContextWindow: 128000, Timeout: 2 * time.Hour,
			FirstByteTimeout: time.Hour, Stream: true},
		"whole": openAITarget(t, "whole", whole),
	}, "slow", "whole")

	// Bounded only so that a job left waiting for a resolution fails the
	// test rather than hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"default","stream":true,"messages":[{"role":"user","content":"how do I fix my router?"}]}`))
	req.Header.Set("Authorization", "Bearer "+callerKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	job := resp.Header.Get("X-Router-Job-Id")
	b, err := io.ReadAll(resp.Body)
	var state, kind string
	if qerr := db.Pool.QueryRow(context.Background(),
		`SELECT state, error->>'kind' FROM attempts WHERE job_id = $1 AND provider = 'slow'`, job).Scan(&state, &kind); qerr != nil {
		t.Fatal(qerr)
	}
	if state != "failed" || kind != "stream_timeout" {
		t.Errorf("the trickling attempt is %s (%s), want failed (stream_timeout)", state, kind)
	}
	if n := slow.cut.Load(); n != 1 {
		t.Errorf("the trickling attempt's deadline was made to pass %d times, want once (at its status line)", n)
	}
	if err != nil {
		t.Fatalf("the caller's stream did not end: %v (received: %s)", err, b)
	}
	if !strings.Contains(string(b), "wait ten seconds") || !strings.Contains(string(b), "data: [DONE]") {
		t.Fatalf("the caller did not get the next target's answer:\n%s", b)
	}
}
