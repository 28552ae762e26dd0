package server

import (
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/config"
)

// One bearer key held by two variables for two owners would authenticate as
// whichever came last: the router refuses to start.
func TestStaticKeysRefuseOneKeyForTwoOwners(t *testing.T) {
	t.Setenv("GUARD_KEY_ACME", "same-secret")
	t.Setenv("GUARD_KEY_GLOBEX", "same-secret")
	t.Setenv("GUARD_KEY_ACME_2", "same-secret")
	cfg := &config.Config{APIKeys: []config.APIKey{{Owner: "acme", KeyEnv: "GUARD_KEY_ACME"}, {Owner: "globex", KeyEnv: "GUARD_KEY_GLOBEX"}}}
	_, err := staticKeys(cfg)
	if err == nil || !strings.Contains(err.Error(), "environment variable GUARD_KEY_ACME (owner acme) and environment variable GUARD_KEY_GLOBEX (owner globex) hold the same key") {
		t.Fatalf("one key for two owners: %v", err)
	}
	cfg.APIKeys[1] = config.APIKey{Owner: "acme", KeyEnv: "GUARD_KEY_ACME_2"}
	keys, err := staticKeys(cfg)
	if err != nil || keys["same-secret"] != "acme" {
		t.Fatalf("one key in two variables of one owner: %v %v", keys, err)
	}
}

// A body limit whose max+1 overflows (or a non-positive one) must not drop
// every body before the handler sees it.
func TestBodyLimitNeverDropsBodies(t *testing.T) {
	for _, max := range []int64{math.MaxInt64, -1, 0} {
		addr, _ := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			_, _ = w.Write(b)
		}), config.HTTP{ReadHeaderTimeout: config.Duration(time.Second), ReadBodyTimeout: config.Duration(time.Second), MaxBodyBytes: max})
		resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(`{"a":1}`))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != `{"a":1}` {
			t.Errorf("max_body_bytes %d: the handler saw %q", max, got)
		}
	}
}
