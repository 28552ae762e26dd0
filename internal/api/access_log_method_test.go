package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// The access log clips a long path to 2 KiB because "a path is the caller's,
// up to net/http's header limit, on any request, authenticated or not"
// (internal/api/problem.go, logPathBytes). The method is the caller's too,
// sent before any key is checked, and is logged whole: one unauthenticated
// request with a 32 KiB method writes a 32 KiB log line (the 405's detail
// quotes only 64 bytes of it, docs/operations.md). It is clipped to 64
// bytes with method_bytes, its length. Found by review (rdocs8).
func TestAccessLogClipsALongMethod(t *testing.T) {
	logs := &lockedBuffer{}
	b := setup(t, options{logs: logs})
	method := strings.Repeat("X", 32<<10)
	r := b.do(t, method, "/v1/jobs", "", "")
	if r.status != http.StatusMethodNotAllowed {
		t.Fatalf("%d %.300s, want 405", r.status, r.raw)
	}
	var line string
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(l, "msg=http") && strings.Contains(l, "status=405") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no access log line for the request:\n%.2000s", logs.String())
	}
	if len(line) > 4<<10 {
		t.Fatalf("access log line of %d bytes for one unauthenticated request: the method is logged whole (%.200s…); want it clipped as the path is", len(line), line)
	}
	if !strings.Contains(line, "method_bytes=32768") {
		t.Errorf("the access log line does not give the method's length: %.300s", line)
	}
}
