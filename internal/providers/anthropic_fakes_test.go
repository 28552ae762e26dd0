package providers

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// anthReal400 answers as Anthropic does a request it refuses: HTTP 400 with
// an invalid_request_error.
func anthReal400(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(400)
	fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":%q},"request_id":"req_x"}`, msg)
}

// anthOK answers with a short complete message.
func anthOK(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}`))
}

// anthSSE writes each event (its data JSON) as an SSE event named by its type.
func anthSSE(w http.ResponseWriter, evs ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range evs {
		var typ struct {
			Type string `json:"type"`
		}
		json.Unmarshal([]byte(ev), &typ)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ.Type, ev)
	}
}
