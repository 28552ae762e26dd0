package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// Reconciliation trusts a lookup's "no record" to fail an unknown attempt and
// let its job go on elsewhere, and its "found" to complete the job from the
// stored answer. An answer that is not the stored-completions list it asked
// for (a proxy's 200 with an empty object or an error body, an endpoint that
// ignores the metadata filter and lists someone else's completion) must be
// neither: it is an error, and the attempt stays unknown.
func TestOpenAILookupTrustsOnlyAStoredCompletionsList(t *testing.T) {
	other := `{"id":"chatcmpl-9","object":"chat.completion","created":1700000000,"model":"gpt-test-0613",
"metadata":{"router_attempt_id":"att-other","router_job_id":"job-9"},
"choices":[{"index":0,"message":{"role":"assistant","content":"{\"a\":9}"},"finish_reason":"stop"}],
"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	mine := `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt-test-0613",
"metadata":{"router_attempt_id":"att-mine","router_job_id":"job-1"},
"choices":[{"index":0,"message":{"role":"assistant","content":"{\"a\":1}"},"finish_reason":"stop"}],
"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	bodies := map[string]string{
		"att-empty-object": `{}`,
		"att-error-200":    `{"error":{"message":"upstream unavailable","type":"server_error"}}`,
		"att-null-data":    `{"object":"list","data":null}`,
		"att-not-a-list":   completionBody,
		"att-unfiltered":   `{"object":"list","data":[` + other + `],"has_more":true}`,
		"att-mine":         `{"object":"list","data":[` + mine + `],"has_more":false}`,
		"att-none":         `{"object":"list","data":[],"first_id":null,"last_id":null,"has_more":false}`,
	}
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, bodies[r.URL.Query().Get("metadata[router_attempt_id]")])
	})
	p := newTestAdapter(t, srv.URL+"/v1", func(c *OpenAIConfig) { c.SupportsLookup = true })
	for _, id := range []string{"att-empty-object", "att-error-200", "att-null-data", "att-not-a-list", "att-unfiltered"} {
		resp, found, err := p.Lookup(context.Background(), id)
		if err == nil || found || resp != nil {
			t.Errorf("%s: found=%v resp=%+v err=%v, want an error (neither found nor \"no record\")", id, found, resp, err)
		}
	}
	if resp, found, err := p.Lookup(context.Background(), "att-mine"); err != nil || !found || resp.Content != `{"a":1}` {
		t.Errorf("att-mine: %+v %v %v, want found", resp, found, err)
	}
	if resp, found, err := p.Lookup(context.Background(), "att-none"); err != nil || found || resp != nil {
		t.Errorf("att-none: %+v %v %v, want no record", resp, found, err)
	}
}
