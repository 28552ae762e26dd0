package main

import (
	"context"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/routerhq/router/conformance"
)

// `router version` and `router --version` say what the binary is — the
// version conformance records (router_version), the module, the revision
// and the Go version — on stdout, exit 0, acting on nothing (no
// configuration read). There was no way to ask. Found by review.
func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(context.Background(), args) })
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "router "+conformance.Version()+"\n") ||
			!strings.Contains(stdout, "\nmodule:   ") || !strings.Contains(stdout, "\nrevision: ") ||
			!strings.Contains(stdout, "\ngo:       "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+"\n") {
			t.Errorf("router %s: exit %d, stderr %q, stdout:\n%s\nwant exit 0 and the version, module, revision and Go version", args[0], code, stderr, stdout)
		}
	}
	var code int
	_, stderr := captureOutput(t, func() { code = run(context.Background(), []string{"version", "extra"}) })
	if code != 2 || !strings.Contains(stderr, `unexpected argument "extra"`) {
		t.Errorf("router version extra: exit %d, stderr %q; want exit 2 refusing the word", code, stderr)
	}
	helpRun(t, "Prints this binary's version", "version", "--help")
	helpRun(t, "Prints this binary's version", "help", "version")
	stdout, _ := captureOutput(t, func() { run(context.Background(), []string{"help"}) })
	if !strings.Contains(stdout, "\n  version ") {
		t.Errorf("router help does not list version:\n%s", stdout)
	}
}

// versionText prints what the build information holds: the module and its
// version, the revision with its time and whether the tree was modified, the
// Go version; and says what it lacks.
func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "github.com/routerhq/router", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		}}
	want := "router v1.4.0+0123456789ab-dirty\n" +
		"module:   github.com/routerhq/router v1.4.0\n" +
		"revision: 0123456789abcdef0123456789abcdef01234567 (2026-12-01T10:00:00Z), modified: built with uncommitted changes\n" +
		"go:       go1.99.1 " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if got := versionText("v1.4.0+0123456789ab-dirty", bi); got != want {
		t.Errorf("versionText:\n%s\nwant:\n%s", got, want)
	}
	bi = &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "github.com/routerhq/router", Version: "(devel)"}}
	got := versionText("devel", bi)
	for _, w := range []string{"router devel\n", "(devel): built from a source tree", "revision: unknown (built without version control information)", "go:       go1.99.1"} {
		if !strings.Contains(got, w) {
			t.Errorf("versionText without VCS information:\n%s\nlacks %q", got, w)
		}
	}
	if got := versionText("unknown", nil); !strings.Contains(got, "no build information") || !strings.Contains(got, runtime.Version()) {
		t.Errorf("versionText without build information:\n%s", got)
	}
}
