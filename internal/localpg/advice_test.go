package localpg_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/localpg"
)

// A start of an existing cluster that fails says what to do by what the
// server logged; it used to say, whatever the cause, to delete the data
// directory, even when the cause was another server running on it. Found by
// review.
func TestStartFailureAdviceFitsTheCause(t *testing.T) {
	const dir = "/srv/pg/data"
	for _, c := range []struct {
		name, logged string
		portTaken    bool
		want         []string
		deletes      bool
	}{
		{"another server runs there",
			"FATAL:  lock file \"postmaster.pid\" already exists\nHINT:  Is another postmaster (PID 4242) running in data directory \"/srv/pg/data\"?\n",
			false, []string{"another PostgreSQL server (pid 4242) is running", "kill 4242"}, false},
		{"the port was taken",
			"LOG:  could not bind IPv4 address \"127.0.0.1\": Address already in use\nFATAL:  could not create any TCP/IP sockets\n",
			true, []string{"another program took each of the", "ports"}, false},
		{"another major version",
			"FATAL:  database files are incompatible with server\nDETAIL:  The data directory was initialized by PostgreSQL version 14, which is not compatible with this version 15.18 (Debian).\n",
			false, []string{"made by PostgreSQL 14", "this machine has PostgreSQL 15", "install PostgreSQL 14", "pg_upgrade"}, true},
		{"unknown: perhaps half-built",
			"FATAL:  something else\n",
			false, []string{"does not start"}, true},
	} {
		got := localpg.StartAdvice(c.logged, c.portTaken, dir)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the error does not say %q:\n%s", c.name, w, got)
			}
		}
		if deletes := strings.Contains(got, "rm -rf"); deletes != c.deletes {
			t.Errorf("%s: says to delete the data directory: %v, want %v:\n%s", c.name, deletes, c.deletes, got)
		}
	}
}
