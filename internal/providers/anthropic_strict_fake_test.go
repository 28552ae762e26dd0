package providers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sync"
)

// anthropicEmail is how the strict fake spots an e-mail address in
// metadata.user_id, as Anthropic does.
var anthropicEmail = regexp.MustCompile(`[^@\s]+@[^@\s]+\.[a-z]+`)

// anthStrict is a Messages API that checks what Anthropic checks of a
// history's tool ids and of metadata.user_id: a tool_use id used twice in
// the request ("`tool_use` ids must be unique"), a tool_result that answers
// no tool_use of the assistant message right before it, and a user_id that
// holds an e-mail address are refused with Anthropic's 400. It answers a
// streamed request with a short SSE message, another with a JSON one, and
// keeps the last request's tool ids and user_id for the test to read.
type anthStrict struct {
	mu      sync.Mutex
	useIDs  []string // the tool_use ids of the last request, in order
	results []string // its tool_results' tool_use_ids, in order
	userID  string   // its metadata.user_id
}

func (a *anthStrict) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Stream   bool `json:"stream"`
		Metadata struct {
			UserID string `json:"user_id"`
		} `json:"metadata"`
		Messages []struct {
			Content []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		anthReal400(w, "body: "+err.Error())
		return
	}
	a.mu.Lock()
	a.useIDs, a.results, a.userID = nil, nil, body.Metadata.UserID
	for _, m := range body.Messages {
		for _, c := range m.Content {
			switch c.Type {
			case "tool_use":
				a.useIDs = append(a.useIDs, c.ID)
			case "tool_result":
				a.results = append(a.results, c.ToolUseID)
			}
		}
	}
	a.mu.Unlock()
	if anthropicEmail.MatchString(body.Metadata.UserID) {
		anthReal400(w, "metadata.user_id: user_id appears to contain an email address. Please send a uuid or hash value instead.")
		return
	}
	seen := map[string]bool{}
	prev := map[string]bool{} // the tool_use ids of the message before
	for i, m := range body.Messages {
		cur := map[string]bool{}
		for j, c := range m.Content {
			switch c.Type {
			case "tool_use":
				if seen[c.ID] {
					anthReal400(w, fmt.Sprintf("messages.%d.content.%d: `tool_use` ids must be unique", i, j))
					return
				}
				seen[c.ID], cur[c.ID] = true, true
			case "tool_result":
				if !prev[c.ToolUseID] {
					anthReal400(w, fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. "+
						"Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, c.ToolUseID))
					return
				}
			}
		}
		prev = cur
	}
	if body.Stream {
		anthSSE(w,
			`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"done"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}`,
			`{"type":"message_stop"}`)
		return
	}
	anthOK(w)
}

// ids returns the last request's tool_use ids and tool_result ids.
func (a *anthStrict) ids() (uses, results []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.useIDs...), append([]string(nil), a.results...)
}

// user returns the last request's metadata.user_id.
func (a *anthStrict) user() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.userID
}
