package providers

import (
	"context"
	"encoding/json"
	"testing"
)

// response_format.json_schema.description was dropped on the way to the
// provider: the adapter built the json_schema from Name, Schema and Strict
// only. It is sent now, plain and streamed. Found by review.
func TestOpenAISendsTheFormatsDescription(t *testing.T) {
	c, url := answeringCapture(t)
	p := newTestAdapter(t, url, nil)
	req := testRequest()
	req.ResponseFormat = &ResponseFormat{Type: "json_schema", Name: "city", Description: "one city of Norway", Schema: []byte(`{"type":"object"}`)}
	for _, stream := range []bool{false, true} {
		var err error
		if stream {
			_, err = p.CompleteStream(context.Background(), req, nil)
		} else {
			_, err = p.Complete(context.Background(), req)
		}
		if err != nil {
			t.Fatalf("stream %v: %v", stream, err)
		}
		var got struct {
			ResponseFormat struct {
				JSONSchema struct {
					Description string `json:"description"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		body := c.last(t)
		if err := json.Unmarshal(body, &got); err != nil || got.ResponseFormat.JSONSchema.Description != "one city of Norway" {
			t.Fatalf("stream %v: body %s (%v), want the description in response_format.json_schema", stream, body, err)
		}
	}
}
