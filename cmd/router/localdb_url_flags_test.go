package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With DATABASE_URL set, localdb starts no server, so --dir and --durable
// would be ignored: given, they are a usage error (exit 2) naming them, and
// the command is not run. (They were accepted and the command silently ran
// on the exported database: `make bench`, meant for a durable private
// server, on whatever DATABASE_URL named.) Without them, the command runs as
// before. Found by review.
func TestLocalDBRefusesServerFlagsWithDatabaseURL(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://127.0.0.1:1/unused")
	base := t.TempDir()
	for i, c := range []struct {
		flags, want []string
	}{
		{[]string{"--durable"}, []string{"--durable given while DATABASE_URL is set", "unset DATABASE_URL", "drop --durable"}},
		{[]string{"--durable=false"}, []string{"--durable given"}},
		{[]string{"--dir", filepath.Join(base, "pg")}, []string{"--dir given while DATABASE_URL is set"}},
		{[]string{"--durable", "--dir", filepath.Join(base, "pg")}, []string{"--dir and --durable given"}},
	} {
		marker := filepath.Join(base, "ran"+string(rune('a'+i)))
		args := append(append([]string{"localdb"}, c.flags...), "--", "touch", marker)
		var code int
		_, stderr := captureOutput(t, func() { code = run(context.Background(), args) })
		ok := code == 2
		for _, w := range c.want {
			ok = ok && strings.Contains(stderr, w)
		}
		if !ok {
			t.Errorf("router %q with DATABASE_URL set: exit code %d, stderr %q; want exit code 2 saying %q", args, code, stderr, c.want)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("router %q with DATABASE_URL set ran the command", args)
		}
	}
	marker := filepath.Join(base, "plain")
	var code int
	_, stderr := captureOutput(t, func() { code = run(context.Background(), []string{"localdb", "--", "touch", marker}) })
	if _, err := os.Stat(marker); code != 0 || err != nil {
		t.Errorf("localdb -- touch with DATABASE_URL set and no --dir or --durable: exit code %d (%v), stderr %q; want the command run", code, err, stderr)
	}
}
