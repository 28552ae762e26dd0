package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// A chat call's Idempotency-Key lives in the scope (owner, "chat:<route>",
// key). POST /v1/jobs naming the prompt "chat:default" — which no prompt can
// be called (prompt names have no ':') — is an unknown prompt, 422, even under
// a key a chat call used: its deploy-replay lookup (replayUnparsed) does not
// look into the chat endpoint's scope, so it neither answers 409
// idempotency-key-reused (telling that the key was used on the chat endpoint)
// nor replays the chat call's job through POST /v1/jobs.
func TestJobsPromptNamingAChatOperationIsUnknown(t *testing.T) {
	b := setup(t, options{})
	chat := b.do(t, "POST", "/v1/chat/completions", acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
		"Idempotency-Key", "shared-key")
	if chat.status != http.StatusOK {
		t.Fatalf("chat: %d %s", chat.status, chat.raw)
	}
	chatJob := chat.header.Get("X-Router-Job-Id")
	job := b.do(t, "GET", "/v1/jobs/"+chatJob, acmeKey, "")
	input, err := json.Marshal(job.body["input"])
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		// Another request: the chat scope's key would say 409.
		`{"prompt":"chat:default","input":{}}`,
		// The chat job's own request as a job would be sent: the chat
		// scope's key would replay the chat job.
		`{"prompt":"chat:default","route":"default","input":` + string(input) + `}`,
	} {
		r := b.create(t, acmeKey, "shared-key", body)
		typ, _ := r.body["type"].(string)
		if r.status != http.StatusUnprocessableEntity || !strings.HasSuffix(typ, "unknown-prompt") {
			t.Errorf("POST /v1/jobs %s under a key a chat call used: %d (job %q, Idempotent-Replayed %q; the chat job is %s) %s, want 422 unknown-prompt",
				body, r.status, r.job(), r.header.Get("Idempotent-Replayed"), chatJob, r.raw)
		}
	}
}
