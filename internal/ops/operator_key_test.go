package ops_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/routerhq/router/internal/ops"
)

// opsStatus is the status of GET path on srv with authorization (none when
// empty) and Host host (the listener's own when empty).
func opsStatus(t *testing.T, srv *httptest.Server, path, authorization, host string) int {
	t.Helper()
	req, err := http.NewRequest("GET", srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// An operator key read from a variable that ends in a newline (an env file, a
// Kubernetes secret made --from-file) is compared without it: a header value
// cannot hold a newline, and keyOK trimmed what the client sent but not the
// configured key, so every operator request was a 401 with no hint. Found by
// review.
func TestOperatorKeyWithTrailingNewline(t *testing.T) {
	srv := httptest.NewServer(ops.New(ops.Config{Key: "s3cret-operator-key\n"}, nil, nil, nil))
	defer srv.Close()
	if got := opsStatus(t, srv, "/v1/nothing", "Bearer s3cret-operator-key", ""); got != http.StatusNotFound {
		t.Fatalf("the operator key (configured with a trailing newline) sent without it: %d, want 404 (let in, no such endpoint)", got)
	}
	if got := opsStatus(t, srv, "/v1/nothing", "Bearer another-key", ""); got != http.StatusUnauthorized {
		t.Fatalf("a wrong key: %d, want 401", got)
	}
}

// A configured key that is only white space is not taken for no key: the
// listener would then let in any request that says it is addressed to a
// loopback host. Every request is refused instead (and the server refuses to
// start with such a key).
func TestBlankOperatorKeyRefusesEverything(t *testing.T) {
	srv := httptest.NewServer(ops.New(ops.Config{Key: " \n"}, nil, nil, nil))
	defer srv.Close()
	for _, auth := range []string{"", "Bearer ", "Bearer \t"} {
		if got := opsStatus(t, srv, "/v1/nothing", auth, "127.0.0.1"); got != http.StatusUnauthorized {
			t.Errorf("a blank operator key, Authorization %q, Host 127.0.0.1: %d, want 401", auth, got)
		}
	}
}
