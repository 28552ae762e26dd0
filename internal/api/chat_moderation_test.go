package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// openai-go v3.98.0 (the version in go.mod) sends ChatCompletionNewParams.Moderation,
// `moderation: {model, policy: {input: {mode: "block"|"score"}, output: {...}}}`:
// "Configuration for running moderation on the request input and generated
// output", and the completion answers with a `moderation` member holding the
// results. The router neither forwarded it (chat.Input has no member for it)
// nor refused it: it was an unknown top-level name, ignored. A caller that
// asked for flagged input or output to be blocked got the unmoderated answer
// with 200 and no sign that nothing was moderated. It is refused now, like
// web_search_options (chat.Request: "those it knows and cannot honour … are
// refused"). Found by review (rchat7).
func TestModerationIsNotDroppedSilently(t *testing.T) {
	rig := setupOpenAIUpstream(t, func(w http.ResponseWriter, body map[string]any) {
		upstreamSSE(w, upstreamChunk(`{"role":"assistant","content":"unmoderated answer"}`, ""), upstreamChunk(`{}`, "stop"))
	})
	body := `{"model":"default","messages":[{"role":"user","content":"hi"}],` +
		`"moderation":{"model":"omni-moderation-latest","policy":{"input":{"mode":"block"},"output":{"mode":"block"}}}}`
	req, _ := http.NewRequest(http.MethodPost, rig.srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+acmeKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Error *struct {
			Param *string `json:"param"`
		} `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode == http.StatusBadRequest && out.Error != nil && out.Error.Param != nil && *out.Error.Param == "moderation" {
		return // refused, naming the field: fixed one way
	}
	for _, sent := range rig.upstream.requests() {
		if _, ok := sent["moderation"]; ok {
			return // passed to the provider: fixed the other way
		}
	}
	t.Fatalf("moderation with policy block was neither refused (400, param moderation) nor sent to the provider: status %d, %d upstream request(s) without it",
		resp.StatusCode, len(rig.upstream.requests()))
}
