package config

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// listen and ops_listen on one socket are refused at load ("are the same
// port"), so that `router config check` refuses what serve would, and serve
// does not fail at start on a port "another process" holds (48f47ca compared
// the two by the port the listener reads: 08080 is 8080). The hosts are still
// compared as text, so one address written two ways — an IPv4-mapped
// [::ffff:127.0.0.1] (Go listens on it as 127.0.0.1), the unspecified address
// written [0::0] or [0:0:0:0:0:0:0:0] (all interfaces, as [::]), ::1 written
// out in full — passes the load and `router config check` (exit 0, "valid"),
// and serve then stops at start: listen on ...: address already in use:
// another process is listening there — most often a router already running.
//
// Each pair is first bound as serve binds it (net.Listen "tcp", listen first,
// then ops_listen on the same port): only pairs the kernel refuses are judged.
// Found by review (rcli13).
func TestListenOpsListenSameSocketOtherSpelling(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	pairs := []struct{ listen, ops string }{
		{"[::ffff:127.0.0.1]", "127.0.0.1"},
		{"127.0.0.1", "[::ffff:127.0.0.1]"},
		{"[0::0]", "127.0.0.1"},
		{"[0:0:0:0:0:0:0:0]", "127.0.0.1"},
		{"[::ffff:0.0.0.0]", "127.0.0.1"},
		{"[0:0:0:0:0:0:0:1]", "[::1]"},
	}
	judged := 0
	for _, p := range pairs {
		// A free port, bound as serve binds listen, then ops_listen.
		first, err := net.Listen("tcp", p.listen+":0")
		if err != nil {
			t.Logf("%s: cannot listen here (%v): skipped", p.listen, err)
			continue
		}
		port := strconv.Itoa(first.Addr().(*net.TCPAddr).Port)
		second, err := net.Listen("tcp", p.ops+":"+port)
		first.Close()
		if err == nil {
			second.Close()
			t.Logf("%s:%s and %s:%s are two sockets here: skipped", p.listen, port, p.ops, port)
			continue
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			t.Logf("%s:%s: %v: skipped", p.ops, port, err)
			continue
		}
		judged++
		cfg := defaultsBase + "listen: \"" + p.listen + ":" + port + "\"\nops_listen: \"" + p.ops + ":" + port + "\"\n"
		_, perr := Parse([]byte(cfg))
		if perr == nil || !strings.Contains(perr.Error(), "same port") {
			t.Errorf("listen %s:%s, ops_listen %s:%s: serve's second listen fails (%v), but the load accepts the pair (err %v): "+
				"`router config check` says valid, and serve stops at start saying another process holds the port",
				p.listen, port, p.ops, port, err, perr)
		}
	}
	if judged == 0 {
		t.Skip("no pair conflicts on this machine")
	}
}
