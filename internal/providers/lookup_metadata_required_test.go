package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

func TestLookupRefusesACompletionWithoutTheAttemptID(t *testing.T) {
	stranger := `{"id":"chatcmpl-7","object":"chat.completion","created":1700000000,"model":"gpt-test-0613",
"metadata":{},
"choices":[{"index":0,"message":{"role":"assistant","content":"{\"a\":7}"},"finish_reason":"stop"}],
"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[`+stranger+`],"has_more":true}`)
	})
	p := newTestAdapter(t, srv.URL+"/v1", func(c *OpenAIConfig) { c.SupportsLookup = true })
	resp, found, err := p.Lookup(context.Background(), "att-mine")
	if err == nil || found {
		t.Errorf("a listed completion without the attempt's metadata: found=%v resp=%+v err=%v, want an error", found, resp, err)
	}
}
