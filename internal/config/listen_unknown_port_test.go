package config

import (
	"net"
	"strings"
	"testing"
)

// A listen or ops_listen port shaped like a service name that this machine
// does not know (808O, a letter O typed for a zero; 8080x) passed the load
// and `router config check`, and serve failed at start on "lookup tcp/808O:
// unknown port". It is refused at load, naming the setting, the line and the
// fix; a service name the listener would find (http, in Go's built-in table
// on every machine) is still accepted. Found by review (rjobs12 F1).
func TestListenPortUnknownServiceNameRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, c := range []struct{ yaml, want string }{
		{"log: {level: info}\nlisten: 127.0.0.1:808O\n",
			`line 2: listen: 127.0.0.1:808O: port "808O" is neither a number nor a service name known on this machine (/etc/services), so the listener could not open it: write the port as a number from 0 to 65535 (for example 127.0.0.1:8080)`},
		{"listen: 127.0.0.1:8080x\n", `line 1: listen: 127.0.0.1:8080x: port "8080x" is neither a number nor a service name known`},
		{"listen: 127.0.0.1:8080\nops_listen: 127.0.0.1:9O9O\n", `line 2: ops_listen: 127.0.0.1:9O9O: port "9O9O" is neither a number nor a service name known`},
	} {
		_, port, _ := net.SplitHostPort(strings.TrimSpace(c.yaml[strings.LastIndex(strings.TrimSpace(c.yaml), " ")+1:]))
		if _, err := net.LookupPort("tcp", port); err == nil {
			t.Fatalf("this machine knows a service %q: the test's premise does not hold", port)
		}
		_, err := Parse([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: want an error saying %q, got %v", c.yaml, c.want, err)
		}
	}
	// A service name the listener finds stays accepted.
	for _, y := range []string{"listen: 127.0.0.1:http\n", "ops_listen: 127.0.0.1:https\n"} {
		if _, err := Parse([]byte(y)); err != nil {
			t.Errorf("%q was refused: %v", y, err)
		}
	}
}
