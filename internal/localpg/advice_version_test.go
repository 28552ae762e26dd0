package localpg_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/localpg"
)

// A cluster of a newer PostgreSQL than the machine's was advised an
// "upgrade" to the older one with pg_upgrade, which cannot downgrade; one of
// a version numbered the old way (9.6) got the advice for an unknown failure
// (delete it), not what it was. Found by review.
func TestAnotherVersionsClusterAdviceFitsTheVersions(t *testing.T) {
	const dir = "/srv/pg/data"
	logged := func(made string) string {
		return "FATAL:  database files are incompatible with server\n" +
			"DETAIL:  The data directory was initialized by PostgreSQL version " + made +
			", which is not compatible with this version 15.18 (Debian 15.18-0+deb12u1).\n"
	}
	for _, c := range []struct {
		made       string
		want, nots []string
	}{
		{"16", []string{"made by PostgreSQL 16", "this machine has PostgreSQL 15", "install PostgreSQL 16 (apt-get install postgresql-16",
			"apt.postgresql.org", "dump it with PostgreSQL 16's pg_dump"}, []string{"pg_upgrade", "upgrade it to"}},
		{"14", []string{"made by PostgreSQL 14", "this machine has PostgreSQL 15", "install PostgreSQL 14 (apt-get install postgresql-14",
			"upgrade it to 15 with pg_upgrade"}, []string{"pg_dump"}},
		{"9.6", []string{"made by PostgreSQL 9.6", "this machine has PostgreSQL 15", "install PostgreSQL 9.6 (apt-get install postgresql-9.6",
			"upgrade it to 15 with pg_upgrade"}, []string{"pg_dump", "does not start"}},
	} {
		got := localpg.StartAdvice(logged(c.made), false, dir)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("cluster of PostgreSQL %s, server 15.18: the error does not say %q:\n%s", c.made, w, got)
			}
		}
		for _, n := range c.nots {
			if strings.Contains(got, n) {
				t.Errorf("cluster of PostgreSQL %s, server 15.18: the error says %q:\n%s", c.made, n, got)
			}
		}
	}
}
