package testdb

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// MainWithRouter is Main for packages whose tests run the router binary as
// processes: it builds cmd/router once (with the race detector, so a data race
// in a router process ends it with a report) into a temporary directory, sets
// *bin to its path, runs the tests with a database and removes the binary.
func MainWithRouter(m *testing.M, bin *string) {
	dir, err := os.MkdirTemp("", "router-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = filepath.Join(dir, "router")
	build := exec.Command("go", "build", "-race", "-o", *bin, "github.com/routerhq/router/cmd/router")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build router:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := Run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}
