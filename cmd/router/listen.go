package main

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// listenFor binds addr for the config setting named (`listen`, `ops_listen`).
// An address already in use is most often a router already running there —
// a second `make run` beside the first — so the refusal says so, and how to
// find it, instead of only the kernel's "address already in use".
func listenFor(addr, setting string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listen on %s: %w: another process is listening there — most often a router already running "+
			"(a `make run` or `router serve` in another terminal: stop it, or use the one that runs; `ss -ltnp` names the process), "+
			"or change `%s` in the config", addr, err, setting)
	}
	return nil, fmt.Errorf("listen on %s: %w (change `%s` in the config)", addr, err, setting)
}
