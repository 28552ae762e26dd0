package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// The chat endpoint's 409 gives the advice POST /v1/jobs gives
// (TestKeyReusedAfterExpiryAdvice): a chat call resent unchanged after its
// key expired and another request claimed it is told where its job is, not
// to "resend the original request unchanged", which it has just done.
func TestChatKeyReusedAfterExpiryNamesTheEarlierJob(t *testing.T) {
	b := setup(t, options{})
	ctx := context.Background()
	ask := func(content string) openai.ChatCompletionRequest {
		return openai.ChatCompletionRequest{Model: "default", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: content}}}
	}
	c := b.keyedClient("chat-exp-1")
	first, err := c.CreateChatCompletion(ctx, ask("A"))
	if err != nil {
		t.Fatal(err)
	}
	var jobID string
	if err := b.db.Pool.QueryRow(ctx, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' RETURNING job_id::text`).Scan(&jobID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateChatCompletion(ctx, ask("B")); err != nil {
		t.Fatalf("B under the expired key: %v", err)
	}
	_, err = c.CreateChatCompletion(ctx, ask("A")) // A's request again
	e := apiError(err)
	if e == nil || e.HTTPStatusCode != http.StatusConflict || e.Code != "idempotency_key_reused" {
		t.Fatalf("A's request under a key B took over: %v, want 409 idempotency_key_reused", err)
	}
	for _, want := range []string{"job " + jobID, "GET /v1/jobs/" + jobID, "new Idempotency-Key"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("the 409 does not say %q: %q (first answer %s)", want, e.Message, first.ID)
		}
	}
	if strings.Contains(e.Message, "resend the original request unchanged") {
		t.Errorf("the 409 tells the caller to do what it just did: %q", e.Message)
	}
	// A different request under the key gets the usual words.
	_, err = c.CreateChatCompletion(ctx, ask("C"))
	if e := apiError(err); e == nil || e.HTTPStatusCode != http.StatusConflict || strings.Contains(e.Message, jobID) ||
		!strings.Contains(e.Message, "resend the original request unchanged") || !strings.Contains(e.Message, "retention") {
		t.Fatalf("a different request under the key: %v", err)
	}
}
