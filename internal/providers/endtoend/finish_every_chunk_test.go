package endtoend_test

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/race"
)

// SPEC §4.3, §15: a gateway in front of Gemini sends finish_reason "stop" on
// every chunk, so its stream cut part-way (the body ending without [DONE])
// also ended on a "stop": the cut answer won the job and reached the caller
// with finish_reason stop and [DONE]. Now the attempt fails as a cut stream
// and the job fails over to the next target, whose whole answer the caller
// gets. Found by review.
func TestFinishOnEveryChunkCutStreamFailsOver(t *testing.T) {
	cut := openAIStream(t,
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"Step 1: unplug the router."},"finish_reason":"stop"}]}`,
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"content":" Step 2: wa"},"finish_reason":"stop"}]}`,
	) // the body ends: cut
	whole := openAIStream(t,
		`{"id":"gen-2","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"Unplug it, wait ten seconds, plug it back in."},"finish_reason":"stop"}]}`,
		"[DONE]")
	srv, db := serve(t, map[string]*race.Target{
		"gemini": openAITarget(t, "gemini", cut),
		"whole":  openAITarget(t, "whole", whole),
	}, "gemini", "whole")
	job, body := streamChat(t, srv.URL)
	if strings.Contains(body, "Step 2: wa") || !strings.Contains(body, "wait ten seconds") || !strings.Contains(body, "data: [DONE]") {
		t.Fatalf("the caller did not get the whole answer alone:\n%s", body)
	}
	var state, kind string
	if err := db.Pool.QueryRow(context.Background(),
		`SELECT state, error->>'kind' FROM attempts WHERE job_id = $1 AND provider = 'gemini'`, job).Scan(&state, &kind); err != nil {
		t.Fatal(err)
	}
	if state != "failed" || kind != "stream_cut" {
		t.Errorf("the cut attempt is %s (%s), want failed (stream_cut)", state, kind)
	}
}
