package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
)

// debugGet asks the debug listener at addr for path with Host host.
func debugGet(t *testing.T, addr, path, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// --debug-listen has no authentication. Like the operator listener without an
// operator key, it must not answer a request whose Host is not a loopback
// host: a web page in a browser on the machine could rebind its own name to
// the listener (DNS rebinding) and read the command line and goroutine dumps,
// or start CPU profiles, as its own origin. Found by review.
func TestDebugListenerRefusesForeignHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := serveDebug(ln, slog.New(slog.DiscardHandler))
	defer stop()
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	for _, host := range []string{"attacker.example:" + port, "attacker.example", "127.0.0.1.nip.io:" + port, "10.0.0.7:" + port} {
		for _, path := range []string{"/debug/pprof/cmdline", "/debug/pprof/", "/debug/pprof/goroutine?debug=1"} {
			status, body := debugGet(t, addr, path, host)
			if status != http.StatusMisdirectedRequest || !strings.Contains(body, "loopback") {
				t.Errorf("GET %s with Host %s: %d %.200q, want 421 naming the loopback hosts it answers", path, host, status, body)
			}
		}
	}
}

// The debug listener answers requests addressed to a loopback host, with any
// port — what go tool pprof, curl and the bench (routerbench, which profiles
// through http://127.0.0.1:PORT) send.
func TestDebugListenerServesLoopbackHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := serveDebug(ln, slog.New(slog.DiscardHandler))
	defer stop()
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	for _, host := range []string{addr, "localhost:" + port, "[::1]:" + port, "127.0.0.1"} {
		if status, body := debugGet(t, addr, "/debug/pprof/cmdline", host); status != http.StatusOK {
			t.Errorf("GET /debug/pprof/cmdline with Host %s: %d %.200s, want 200", host, status, body)
		}
	}
	if status, body := debugGet(t, addr, "/debug/pprof/goroutine?debug=1", addr); status != http.StatusOK || !strings.Contains(body, "goroutine profile") {
		t.Errorf("GET /debug/pprof/goroutine?debug=1 with Host %s: %d %.200s, want the goroutine profile", addr, status, body)
	}
}
