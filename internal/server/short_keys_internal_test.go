package server

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// shortKeysConfig is a configuration with a short key for acme, a long one
// for globex and a short operator key, on listen and ops_listen host.
func shortKeysConfig(t *testing.T, host string) *config.Config {
	t.Helper()
	t.Setenv("ACME_KEY", "k3y-acme") // 8 characters
	t.Setenv("GLOBEX_KEY", "0123456789abcdef")
	t.Setenv("OPS_KEY", "0ps-k3y\n") // 7, read without the newline
	cfg, err := config.Parse([]byte("listen: " + host + ":8080\nops_listen: " + host + ":9090\nops_key_env: OPS_KEY\n" +
		"api_keys: [{owner: acme, key_env: ACME_KEY}, {owner: globex, key_env: GLOBEX_KEY}]\n" +
		"providers: [{name: a, type: scripted}]\nroutes: {default: {providers: [a]}}\nconformance: {gate: off}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A tenant or operator key of a few characters on a listener that is not a
// loopback address was taken without a word: it can be guessed. The router
// now warns at start (it still starts: configurations that loaded before
// still do), naming the key's owner and variable, never the key, and how to
// make one. Found by review (rauth3).
func TestShortKeysOnPublicListenersAreWarnedAbout(t *testing.T) {
	cfg := shortKeysConfig(t, "0.0.0.0")
	keys, err := staticKeys(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opsKey, err := operatorKey(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || opsKey == "" {
		t.Fatalf("the keys were not loaded: tenants %d, operator %v", len(keys), opsKey != "")
	}
	got := shortKeyWarnings(cfg, opsKey)
	if len(got) != 2 {
		t.Fatalf("warnings %q: want one for acme's key and one for the operator key", got)
	}
	for i, want := range []string{"owner acme's API key, only 8 characters long", "the operator key, only 7 characters long"} {
		if !strings.Contains(got[i], want) || !strings.Contains(got[i], "openssl rand -hex 32") {
			t.Errorf("warning %d: %q, want it to say %q and how to make a key", i, got[i], want)
		}
		for _, secret := range []string{"k3y-acme", "0ps-k3y", "0123456789abcdef"} {
			if strings.Contains(got[i], secret) {
				t.Errorf("warning %d repeats a key: %q", i, got[i])
			}
		}
		if strings.Contains(got[i], "globex") {
			t.Errorf("warning %d names globex, whose key is long enough: %q", i, got[i])
		}
	}
	if !strings.Contains(got[0], "ACME_KEY") || !strings.Contains(got[1], "OPS_KEY") {
		t.Errorf("the warnings do not name the variables: %q", got)
	}
}

// On loopback listeners (the demo's, `make run`) short keys are not warned
// about: nothing off the host can try them.
func TestShortKeysOnLoopbackListenersAreNotWarnedAbout(t *testing.T) {
	cfg := shortKeysConfig(t, "127.0.0.1")
	opsKey, err := operatorKey(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := shortKeyWarnings(cfg, opsKey); len(got) != 0 {
		t.Errorf("loopback listeners: warnings %q, want none", got)
	}
	t.Setenv("ROUTER_DEMO_KEY", "demo-key") // what make run sets
	demo, err := config.Load("../../demo/router.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opsKey, err = operatorKey(demo)
	if err != nil {
		t.Fatal(err)
	}
	if got := shortKeyWarnings(demo, opsKey); len(got) != 0 {
		t.Errorf("the demo configuration (make run): warnings %q, want none", got)
	}
}

// New logs the warnings, and starts.
func TestStartLogsShortKeyWarnings(t *testing.T) {
	db := testdb.New(t, store.Options{})
	t.Setenv("DATABASE_URL", "")
	logged := func(host string) string {
		t.Helper()
		cfg := shortKeysConfig(t, host)
		cfg.DatabaseURL = db.URL
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		read := make(chan struct{})
		go func() { defer close(read); _, _ = io.Copy(&buf, r) }()
		stderr := os.Stderr
		os.Stderr = w // the router's logger writes where os.Stderr is when New builds it
		srv, err := New(context.Background(), cfg, Options{})
		os.Stderr = stderr
		w.Close()
		if err != nil {
			<-read
			t.Fatalf("New with short keys on %s: %v (a warning, not a refusal)", host, err)
		}
		srv.Close()
		<-read
		return buf.String()
	}
	out := logged("0.0.0.0")
	for _, want := range []string{"owner acme's API key, only 8 characters long", "the operator key, only 7 characters long"} {
		if !strings.Contains(out, "level=WARN") || !strings.Contains(out, want) {
			t.Errorf("start on 0.0.0.0 logged no warning saying %q:\n%s", want, out)
		}
	}
	if out := logged("127.0.0.1"); strings.Contains(out, "characters long") {
		t.Errorf("start on loopback listeners warned of short keys:\n%s", out)
	}
}
