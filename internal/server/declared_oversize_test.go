package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/config"
)

// A body whose Content-Length is over http.max_body_bytes is answered 413 at
// once, none of it read: with Expect: 100-continue the first answer is the
// 413, not 100 Continue (RFC 9110 §10.1.1), and a body being sent (stalled
// here, with an hour to arrive) is not waited for. The answer is in the
// endpoint's shape (OpenAI's on chat), names the declared length, and closes
// the connection, which the server lets go without the rest of the body — a
// rest under 256 KiB too, which net/http would otherwise try to read. Found
// by review: the body was invited, read up to the limit, then refused.
func TestDeclaredOversizedBodyIsRefusedUnread(t *testing.T) {
	for _, limit := range []int64{1 << 20, 1000} {
		a := serveTenantAPI(t, config.HTTP{ReadHeaderTimeout: config.Duration(10 * time.Second),
			ReadBodyTimeout: config.Duration(time.Hour), MaxBodyBytes: limit})
		for _, path := range []string{"/v1/jobs", "/v1/chat/completions"} {
			for _, declared := range []int64{10_000_000_000, 2 * limit} {
				for _, expect := range []bool{true, false} {
					name := fmt.Sprintf("limit %d, %s, Content-Length %d, Expect %v", limit, path, declared, expect)
					t.Run(name, func(t *testing.T) {
						conn := dial(t, a.addr)
						req := "POST " + path + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + goodKey +
							"\r\nIdempotency-Key: k\r\nContent-Type: application/json\r\n" +
							fmt.Sprintf("Content-Length: %d\r\n", declared)
						if expect {
							req += "Expect: 100-continue\r\n\r\n"
						} else {
							req += "\r\n{\"prompt\":" // the start of the body, and no more
						}
						if _, err := io.WriteString(conn, req); err != nil {
							t.Fatal(err)
						}
						br := bufio.NewReader(conn)
						resp, err := http.ReadResponse(br, nil)
						if err != nil {
							t.Fatalf("no answer while the body was still to come: %v", err)
						}
						raw, _ := io.ReadAll(resp.Body)
						want := "body-too-large"
						if api.OpenAIShaped(path) {
							want = "body_too_large"
						}
						if resp.StatusCode != http.StatusRequestEntityTooLarge || answerKind(raw) != want {
							t.Fatalf("first answer %d %s, want 413 %s without reading the body", resp.StatusCode, strings.TrimSpace(string(raw)), want)
						}
						if !strings.Contains(string(raw), fmt.Sprintf("the body is %d bytes (Content-Length)", declared)) ||
							!strings.Contains(string(raw), fmt.Sprintf("limit of %d bytes", limit)) {
							t.Errorf("%s: want the declared length and the limit named", raw)
						}
						if !resp.Close {
							t.Errorf("answer without Connection: close: the connection would wait for the body")
						}
						if _, err := io.ReadAll(br); errors.Is(err, os.ErrDeadlineExceeded) {
							t.Fatalf("the server kept the connection open for the unsent body")
						}
						select {
						case l := <-a.lines:
							if !strings.Contains(l, "status=413") || !strings.Contains(l, "owner=acme") {
								t.Fatalf("log line %q, want the access line of the 413 with owner acme", l)
							}
						case <-time.After(30 * time.Second): // a guard against a hang
							t.Fatal("no access-log line for the 413")
						}
					})
				}
			}
		}
	}
}
