package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/routerhq/router/conformance"
)

// runVersion is `router version` (and `router --version`): what this binary
// is, from the build information the Go toolchain embeds in it — an operator
// (or a bug report) must be able to tell which build runs.
func runVersion(_ context.Context, args []string) error {
	fs := newFlags("version", "router version",
		"Prints this binary's version: the module version, the source revision it was built from "+
			"(marked modified when the tree had uncommitted changes) and the Go version. "+
			"The first line is the version `router conformance run` records with each result (router_version).")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	if _, err := io.WriteString(os.Stdout, versionText(conformance.Version(), bi)); err != nil {
		return fmt.Errorf("print the version: %w", err)
	}
	return nil
}

// versionText is what `router version` prints: "router " and version (the
// summary conformance records) on the first line, then what bi says — the
// main module and its version, the VCS revision, its time and whether the
// tree was modified, the Go version and platform. bi nil: a binary built
// without module support, which says so.
func versionText(version string, bi *debug.BuildInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "router %s\n", version)
	if bi == nil {
		fmt.Fprintf(&b, "module:   unknown (no build information in this binary)\ngo:       %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return b.String()
	}
	path, v := bi.Main.Path, bi.Main.Version
	if path == "" {
		path = bi.Path // a test binary's main module has no path
	}
	switch v {
	case "":
		v = "unknown version"
	case "(devel)":
		v = "(devel): built from a source tree, not a tagged module version"
	}
	fmt.Fprintf(&b, "module:   %s %s\n", path, v)
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	switch {
	case rev == "":
		b.WriteString("revision: unknown (built without version control information)\n")
	default:
		if at != "" {
			rev += " (" + at + ")"
		}
		if modified == "true" {
			rev += ", modified: built with uncommitted changes"
		}
		fmt.Fprintf(&b, "revision: %s\n", rev)
	}
	goVersion := bi.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	fmt.Fprintf(&b, "go:       %s %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}
