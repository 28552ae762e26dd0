package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The caller's user is sent as metadata.user_id, which Anthropic limits to
// 256 characters (a longer one is a 400 that would fail the job as the
// caller's bad request though OpenAI-compatible targets take it). A longer
// user is sent as a stable hash of it.
func TestAnthropicLongUserIsHashed(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Metadata struct {
				UserID string `json:"user_id"`
			} `json:"metadata"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		got = append(got, body.Metadata.UserID)
		if len(body.Metadata.UserID) > 256 {
			anthReal400(w, "metadata.user_id: String should have at most 256 characters")
			return
		}
		anthOK(w)
	}))
	defer srv.Close()
	p := newAnthropicAdapter(t, srv.URL, nil)
	long := strings.Repeat("u", 300)
	for _, user := range []string{long, long, "u-1", strings.Repeat("v", 256)} {
		req := testRequest()
		req.User = user
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatalf("user of %d bytes: %v", len(user), err)
		}
	}
	if got[0] != got[1] || !strings.HasPrefix(got[0], "sha256-") || len(got[0]) != len("sha256-")+64 {
		t.Errorf("a long user sent as %q then %q: want the same sha256- hash", got[0], got[1])
	}
	if got[2] != "u-1" || got[3] != strings.Repeat("v", 256) {
		t.Errorf("users within the limit sent as %q, %q: want them as they are", got[2], got[3])
	}
}
