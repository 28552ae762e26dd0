package api_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
)

// SPEC §15: a streaming chat caller gets a sign of life at least every 10 s.
// A ticker's period is the gap between two comments plus scheduling and the
// flush, so the default period must leave room below 10 s.
func TestStreamKeepAliveDefaultLeavesRoomUnderTenSeconds(t *testing.T) {
	if got := (api.Config{}).WithDefaults().StreamKeepAlive; got <= 0 || got >= 10*time.Second {
		t.Fatalf("default StreamKeepAlive %v, want a period under SPEC §15's 10 s", got)
	}
}
