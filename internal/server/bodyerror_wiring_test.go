package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The router's tenant handler reads a request's body within
// http.read_body_timeout inside the API's middleware: a stalled body is a 408
// carrying the request id, in the header and the problem.
func TestRouterSlowBodyIs408WithRequestID(t *testing.T) {
	db := testdb.New(t, store.Options{})
	srv, err := server.New(context.Background(), newConfig(t, db, newFakeLLM(t).srv.URL, "http: {read_body_timeout: 100ms}\n"), server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tenant := httptest.NewServer(srv.Handler)
	defer tenant.Close()
	conn, err := net.Dial("tcp", tenant.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second)) // a guard against a hang, not a timing assertion
	fmt.Fprintf(conn, "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"prompt\":", tenantKey)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	rid := resp.Header.Get("X-Request-Id")
	var p map[string]any
	_ = json.Unmarshal(body, &p)
	if resp.StatusCode != http.StatusRequestTimeout || rid == "" || p["request_id"] != rid {
		t.Fatalf("status %d, X-Request-Id %q, body %s; want 408 with the request id in both", resp.StatusCode, rid, body)
	}
}
