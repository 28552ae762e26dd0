package ops_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/ops"
)

// A request with two Authorization headers is refused (401, error=
// "invalid_request"), whichever of them holds the operator key, as on the
// tenant API: keyOK took the first, where a proxy or an audit log in front
// may take the last and see another caller. Found by review (rauth3).
func TestOperatorListenerRefusesTwoAuthorizationHeaders(t *testing.T) {
	srv := httptest.NewServer(ops.New(ops.Config{Key: "s3cret-operator-key"}, nil, nil, nil))
	defer srv.Close()
	basic := "Basic " + "dTpzM2NyZXQtb3BlcmF0b3Ita2V5" // u:s3cret-operator-key
	for _, pair := range [][2]string{
		{"Bearer s3cret-operator-key", "Bearer someone-else"},
		{"Bearer someone-else", "Bearer s3cret-operator-key"},
		{"Bearer s3cret-operator-key", "Bearer s3cret-operator-key"},
		{basic, "Bearer someone-else"},
	} {
		req, err := http.NewRequest("GET", srv.URL+"/v1/nothing", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Add("Authorization", pair[0])
		req.Header.Add("Authorization", pair[1])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Title, Detail string }
		derr := json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("Authorization %q then %q: %d, want 401 (let in on the first header)", pair[0], pair[1], resp.StatusCode)
		}
		if got := resp.Header.Values("WWW-Authenticate"); len(got) != 1 || !strings.Contains(got[0], `error="invalid_request"`) {
			t.Errorf("Authorization %q then %q: WWW-Authenticate %q, want one challenge with error=\"invalid_request\"", pair[0], pair[1], got)
		}
		if derr != nil || !strings.Contains(body.Detail, "exactly one") {
			t.Errorf("Authorization %q then %q: detail %q (%v), want it to say to send exactly one", pair[0], pair[1], body.Detail, derr)
		}
	}
	// One header with the key is still let in (404: no such endpoint).
	if got := opsStatus(t, srv, "/v1/nothing", "Bearer s3cret-operator-key", ""); got != http.StatusNotFound {
		t.Fatalf("one Authorization header with the operator key: %d, want 404", got)
	}
}
