package testdb

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"testing"
)

// FreeAddr is a loopback address free now for a process the test starts
// (and may restart on the same address). Its port is chosen below the
// kernel's ephemeral range (ip_local_port_range, 32768–60999 by default):
// a port taken from :0 and closed is an ephemeral one, which the kernel
// may hand at once to any outgoing connection of the packages testing in
// parallel (their database and HTTP clients), and the process's bind then
// fails with "address already in use". Below that range only another
// listener can take it, and the port is checked free before it is given.
func FreeAddr(t testing.TB) string {
	t.Helper()
	low := ephemeralLow()
	for range 200 {
		port := 10000 + rand.IntN(low-10000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // taken: another
		}
		addr := l.Addr().String()
		l.Close()
		return addr
	}
	t.Fatalf("no free loopback port between 10000 and %d after 200 tries", low)
	return ""
}

// ClosedAddr is a loopback address nothing listens on, for a test of a
// refused connection: FreeAddr's, left unbound. A port just taken from :0
// and closed is in the ephemeral range, where any :0 listener of the
// packages testing in parallel (their httptest servers) may be given it
// before the test dials, and the dial is answered.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	return FreeAddr(t)
}

// ephemeralLow is the first port of the kernel's ephemeral range, 32768 when
// it cannot be read (Linux's default; other systems use higher ranges).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	var low, high int
	if err == nil {
		_, err = fmt.Sscan(string(b), &low, &high)
	}
	if err != nil || low <= 11000 {
		return 32768
	}
	return low
}
