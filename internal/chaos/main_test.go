package chaos_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/routerhq/router/internal/testdb"
)

// routerBin is the router binary, built once (with the race detector: a data
// race in a replica under faults ends it with a report, which the run counts
// as an unexpected exit).
var routerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "router-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	routerBin = filepath.Join(dir, "router")
	build := exec.Command("go", "build", "-race", "-o", routerBin, "github.com/routerhq/router/cmd/router")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "chaos: build router:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := testdb.Run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}
