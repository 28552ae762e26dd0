package chat

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// An answer whose provider gave no creation time (Anthropic's Messages API has
// none; some OpenAI-compatible servers leave `created` out) is stamped when it
// is judged: a completion's `created` is Unix seconds, never year 1 (a large
// negative number SDKs turn into nonsense dates).
func TestJudgeStampsAnAnswerWithoutCreated(t *testing.T) {
	before := time.Now().Unix()
	doc, v := Judge(&Input{}, nil, "j", &providers.Response{Content: "hello", Model: "m", FinishReason: "stop"})
	if len(v) > 0 {
		t.Fatal(v)
	}
	c, err := DecodeCompletion(doc)
	if err != nil {
		t.Fatal(err)
	}
	if after := time.Now().Unix(); c.Created < before || c.Created > after {
		t.Fatalf("created %d, want the judging time in [%d, %d]: %s", c.Created, before, after, doc)
	}
	// A provider's own time is kept.
	doc, _ = Judge(&Input{}, nil, "j", &providers.Response{Content: "hello", Model: "m", Created: time.Unix(1700000000, 0)})
	if c, _ := DecodeCompletion(doc); c.Created != 1700000000 {
		t.Fatalf("created %d, want the provider's 1700000000", c.Created)
	}
}
