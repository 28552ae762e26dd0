package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A second `make run` beside a running router used to stop on the kernel's
// "listen on 127.0.0.1:8080: bind: address already in use (change `listen`
// in the config)", which reads as a configuration mistake. It now says that
// another process listens there, most often a router already running, and
// how to find it; the setting named is the one whose address is taken. The
// addresses are taken before anything else: the database named does not
// answer, so a serve that got past its listeners would fail saying so.
func TestServeSaysWhenARouterAlreadyListens(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://u@127.0.0.1:1/d?connect_timeout=1")
	keepGC(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	for setting, yaml := range map[string]string{
		"listen":     "listen: " + addr + "\nops_listen: 127.0.0.1:0\n",
		"ops_listen": "listen: 127.0.0.1:0\nops_listen: " + addr + "\n",
	} {
		path := filepath.Join(t.TempDir(), "router.yaml")
		cfg := yaml + "providers:\n  - {name: p, type: scripted}\nroutes:\n  default: {providers: [p]}\n"
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		var code int
		_, stderr := captureOutput(t, func() { code = run(context.Background(), []string{"serve", "--config", path}) })
		if code != 1 || !strings.Contains(stderr, "listen on "+addr) || !strings.Contains(stderr, "a router already running") ||
			!strings.Contains(stderr, "change `"+setting+"` in the config") {
			t.Errorf("%s taken: exit code %d, stderr %q; want exit code 1 saying a router may already listen on %s and naming `%s`",
				setting, code, stderr, addr, setting)
		}
	}
}
