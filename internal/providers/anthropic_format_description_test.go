package providers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// The Messages API's output_config.format has no description, and a
// json_schema response format's description (what the caller tells the
// model the format is for, which OpenAI gives the model) was dropped without
// a word for Anthropic targets. It is sent as a system text block after the
// conversation's system prompt now, naming the format; a format without a
// description adds nothing.
func TestAnthropicResponseFormatDescription(t *testing.T) {
	var sent struct {
		System []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"system"`
		OutputConfig json.RawMessage `json:"output_config"`
	}
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		sent.System = nil
		if err := json.Unmarshal(b, &sent); err != nil {
			t.Errorf("request body: %v", err)
		}
		anthOK(w)
	})
	p := newAnthropicAdapter(t, srv.URL, nil)
	req := testRequest()
	req.ResponseFormat = &ResponseFormat{Type: "json_schema", Name: "complaint", Description: "A summary of the customer's complaint, for the support queue",
		Schema: []byte(`{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"],"additionalProperties":false}`)}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	want := `The JSON response format "complaint": A summary of the customer's complaint, for the support queue`
	if len(sent.System) != 2 || sent.System[0].Text != "be brief" || sent.System[1].Text != want {
		t.Errorf("system sent %+v, want the system message, then %q", sent.System, want)
	}
	if len(sent.OutputConfig) == 0 {
		t.Error("no output_config sent: the schema must still be sent as the structured-output format")
	}

	req.ResponseFormat.Description = ""
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if len(sent.System) != 1 || sent.System[0].Text != "be brief" {
		t.Errorf("system sent %+v without a description, want the system message alone", sent.System)
	}
}
