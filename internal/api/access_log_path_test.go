package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// The access log line of a request with a long path (up to net/http's header
// limit, on any request, with or without a key) carries its first 2 KiB, cut
// at a character's start, with "…", and path_bytes, the path's whole length.
func TestAccessLogClipsALongPath(t *testing.T) {
	logs := &lockedBuffer{}
	b := setup(t, options{logs: logs})
	// 'é' takes bytes 2047 and 2048: the cut at 2048 bytes falls inside it.
	path := "/" + strings.Repeat("a", 2046) + "é" + strings.Repeat("b", 512<<10-2049)
	r := b.do(t, http.MethodGet, path, "", "")
	if r.status != http.StatusNotFound {
		t.Fatalf("%d %.300s, want 404", r.status, r.raw)
	}
	var line string
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(l, "msg=http") && strings.Contains(l, "status=404") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no access log line for the request:\n%.2000s", logs.String())
	}
	clipped := "path=/" + strings.Repeat("a", 2046) + "… "
	if len(line) > 4<<10 || !strings.Contains(line, clipped) || !strings.Contains(line, "path_bytes=524288") {
		t.Fatalf("access log line of %d bytes, want the path's first 2047 bytes with … and path_bytes=524288:\n%.3000s", len(line), line)
	}
}
