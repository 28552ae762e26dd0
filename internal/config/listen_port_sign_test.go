package config

import (
	"strings"
	"testing"
)

// listen: 127.0.0.1:-1 passed the load: a port ParseUint refuses was taken
// for a service name, and the router failed only at start. A signed port, or
// one that is no service name either, is refused at load. Found by review.
func TestListenPortWithASignOrNoNameRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, c := range []struct{ yaml, want string }{
		{"listen: 127.0.0.1:-1\n", `listen: 127.0.0.1:-1: port "-1" has a sign: write the port as a number from 0 to 65535 without one`},
		{"listen: 127.0.0.1:+8080\n", `listen: 127.0.0.1:+8080: port "+8080" has a sign`},
		{"ops_listen: 127.0.0.1:-9090\n", `ops_listen: 127.0.0.1:-9090: port "-9090" has a sign`},
		{"listen: \"127.0.0.1:80 80\"\n", `port "80 80" is neither a number from 0 to 65535 nor a service name`},
		{"listen: 127.0.0.1:99999999999999999999999\n", `port "99999999999999999999999" is neither a number from 0 to 65535 nor a service name`},
	} {
		_, err := Parse([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: want an error saying %q, got %v", c.yaml, c.want, err)
		}
	}
	// A service name the listener finds is accepted (http is in Go's
	// built-in table, so on every machine; http-alt only where
	// /etc/services lists it).
	if _, err := Parse([]byte("listen: 127.0.0.1:http\n")); err != nil && strings.Contains(err.Error(), "listen:") {
		t.Errorf("a service name was refused: %v", err)
	}
}
