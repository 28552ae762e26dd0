package api_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// GET /v1/models/{model} is the SDKs' models.retrieve: a route or a model
// alias is one OpenAI model (a name may hold slashes), anything else OpenAI's
// 404 model_not_found in OpenAI's error shape, so the SDK reads its code.
func TestRetrieveModel(t *testing.T) {
	b := setup(t, options{models: []string{"gpt-4o-mini", "org/model-x"}})
	c := b.client(acmeKey)
	for _, name := range []string{"default", "gpt-4o-mini", "org/model-x"} {
		m, err := c.GetModel(context.Background(), name)
		if err != nil || m.ID != name || m.Object != "model" || m.OwnedBy != "router" {
			t.Errorf("retrieve %q: %+v %v", name, m, err)
		}
	}
	_, err := c.GetModel(context.Background(), "no-such-model")
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusNotFound || apiErr.Code != "model_not_found" {
		t.Fatalf("retrieve an unknown model: %v", err)
	}
	if r := b.do(t, http.MethodPost, "/v1/models/default", acmeKey, ""); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") == "" {
		t.Errorf("POST /v1/models/default: %d Allow %q", r.status, r.header.Get("Allow"))
	}
	if r := b.do(t, http.MethodGet, "/v1/models/default", "wrong-key", ""); r.status != http.StatusUnauthorized {
		t.Errorf("retrieve with a wrong key: %d", r.status)
	}
}
