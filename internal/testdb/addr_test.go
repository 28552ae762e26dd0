package testdb

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
)

// FreeAddr gives a loopback port below the kernel's ephemeral range, which
// no outgoing connection can be handed, and one that can be bound.
func TestFreeAddrBelowTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	for range 20 {
		addr := FreeAddr(t)
		host, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(p)
		if host != "127.0.0.1" || port < 10000 || port >= low {
			t.Fatalf("FreeAddr = %s; want 127.0.0.1 with a port in [10000, %d)", addr, low)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("FreeAddr = %s, which does not bind: %v", addr, err)
		}
		l.Close()
	}
}

// ClosedAddr gives an address whose connections are refused, below the
// ephemeral range.
func TestClosedAddrRefuses(t *testing.T) {
	addr := ClosedAddr(t)
	_, p, _ := net.SplitHostPort(addr)
	if port, _ := strconv.Atoi(p); port < 10000 || port >= ephemeralLow() {
		t.Fatalf("ClosedAddr = %s; want a port in [10000, %d)", addr, ephemeralLow())
	}
	c, err := net.Dial("tcp", addr)
	if err == nil {
		c.Close()
		t.Fatalf("ClosedAddr = %s, which answered", addr)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
}
