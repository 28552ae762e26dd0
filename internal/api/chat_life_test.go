package api_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// SPEC §15: a streaming chat caller gets the headers (with X-Router-Job-Id) at
// once and an SSE comment line while the router waits for a valid answer.
func TestChatStreamSignsOfLife(t *testing.T) {
	release := make(chan struct{})
	b := setup(t, options{keepAlive: 20 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		<-release
		return providers.Step{Output: "the whole answer"}
	}})
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"default","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+acmeKey)
	resp, err := http.DefaultClient.Do(req) // returns with the headers: the provider is still held
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Router-Job-Id") == "" ||
		resp.Header.Get("Content-Type") != "text/event-stream" {
		close(release)
		t.Fatalf("status %d headers %v", resp.StatusCode, resp.Header)
	}
	lines := bufio.NewScanner(resp.Body)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), ":") {
		close(release)
		t.Fatalf("first line while waiting is %q, want an SSE comment", lines.Text())
	}
	close(release)
	var content strings.Builder
	for lines.Scan() {
		l := lines.Text()
		if strings.HasPrefix(l, "data: {") {
			if i := strings.Index(l, `"content":"`); i >= 0 {
				rest := l[i+len(`"content":"`):]
				content.WriteString(rest[:strings.IndexByte(rest, '"')])
			}
		}
		if l == "data: [DONE]" {
			break
		}
	}
	if content.String() != "the whole answer" {
		t.Fatalf("streamed content %q", content.String())
	}
}

// A chat caller without Idempotency-Key whose job is unknown is told how to
// look the job up, not to resend with a key it never had.
func TestChatUnknownWithoutKeySaysHowToLookUp(t *testing.T) {
	b := setup(t, options{timeout: 50 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Hang: true}
	}})
	r := b.do(t, http.MethodPost, "/v1/chat/completions", acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
	msg, _ := r.body["error"].(map[string]any)["message"].(string)
	id := r.header.Get("X-Router-Job-Id")
	if r.status != http.StatusGatewayTimeout || id == "" || !strings.Contains(msg, "GET /v1/jobs/"+id) ||
		strings.Contains(msg, "same key") || !strings.Contains(msg, "no Idempotency-Key") {
		t.Fatalf("status %d job %q message %q", r.status, id, msg)
	}
}
