package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A --owner or --state that is given but names nothing (`--owner "$O"` with
// $O unset) is a usage error: exit 2, naming the flag, and nothing listed.
// (It was read as no filter and listed every owner's jobs, in every state.)
func TestJobsListRefusesEmptyFilter(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	jobIn(t, db, "acme", "k1", store.JobUnknown, store.AttemptUnknown)
	for _, c := range []struct {
		flags []string
		want  []string
	}{
		{[]string{"--owner", ""}, []string{`--owner "" names no owner`, "leave --owner out"}},
		{[]string{"--owner="}, []string{`--owner "" names no owner`}},
		{[]string{"--owner", " ", "--json"}, []string{`--owner " " names no owner`}},
		{[]string{"--state", ""}, []string{`--state "" names no state`, "pending, running or unknown", "leave --state out"}},
		{[]string{"--owner", "acme", "--state="}, []string{`--state "" names no state`}},
	} {
		args := append([]string{"jobs", "list", "--config", cfg}, c.flags...)
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(context.Background(), args) })
		ok := code == 2 && stdout == ""
		for _, w := range c.want {
			ok = ok && strings.Contains(stderr, w)
		}
		if !ok {
			t.Errorf("router %q: exit code %d, stdout %q, stderr %q; want exit code 2 saying %q",
				args, code, stdout, stderr, c.want)
		}
	}
}
