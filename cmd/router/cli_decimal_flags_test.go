package main

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Integer flags are read in decimal, as an operator writes a number: the
// flag package's fs.Int read Go's syntax, so `--limit 010` listed 8 jobs
// (octal) and `--limit 0x10` 16. A leading zero is only a zero; another base
// is refused (exit 2) saying what to give. Found by review.
func TestIntegerFlagsAreReadInDecimal(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	for i := range 11 {
		jobIn(t, db, "acme", fmt.Sprintf("k%d", i), store.JobRunning, store.AttemptRunning)
	}
	list := func(args ...string) (code int, stdout, stderr string) {
		t.Helper()
		stdout, stderr = captureOutput(t, func() {
			code = run(context.Background(), append([]string{"jobs", "list", "--config", cfg}, args...))
		})
		return code, stdout, stderr
	}
	// 010 is ten: the header and ten jobs, and the note that an eleventh was left out.
	code, out, errOut := list("--limit", "010")
	if code != 0 || strings.Count(out, "\n") != 11 || !strings.Contains(errOut, "only the 10 oldest shown") {
		t.Errorf("jobs list --limit 010: exit %d, stdout:\n%s\nstderr %q\nwant the header and 10 jobs (decimal), and the note that the 10 oldest are shown", code, out, errOut)
	}
	for _, bad := range []string{"0x10", "0o7", "0b1", "1_0", "1.5", "ten", ""} {
		code, out, errOut := list("--limit", bad)
		if code != 2 || out != "" || !strings.Contains(errOut, fmt.Sprintf("invalid value %q for flag -limit", bad)) ||
			!strings.Contains(errOut, "decimal: give digits only, such as 100") {
			t.Errorf("jobs list --limit %q: exit %d, stdout %q, stderr:\n%s\nwant exit 2 saying to give decimal digits", bad, code, out, errOut)
		}
	}
	// --concurrency too: 08 is eight (Go's syntax refused it as a bad
	// octal number, exit 2); past the flags, the missing file fails the run.
	var code2 int
	_, errOut = captureOutput(t, func() {
		code2 = run(context.Background(), []string{"conformance", "run", "--concurrency", "08", "--config", t.TempDir() + "/none.yaml"})
	})
	if code2 != 1 || !strings.Contains(errOut, "read config") {
		t.Errorf("conformance run --concurrency 08: exit %d, stderr %q; want the flag taken (8) and exit 1 for the missing configuration", code2, errOut)
	}
	_, errOut = captureOutput(t, func() {
		code2 = run(context.Background(), []string{"conformance", "run", "--concurrency", "0x4", "--config", cfg})
	})
	if code2 != 2 || !strings.Contains(errOut, `invalid value "0x4" for flag -concurrency`) {
		t.Errorf("conformance run --concurrency 0x4: exit %d, stderr %q; want exit 2 refusing it", code2, errOut)
	}
}

// No command defines an integer flag with the flag package's own readers
// (Int, Int64, Uint, Uint64 and their Var forms), which read Go's syntax (010
// is 8): every one is an intVar. Their help does not tell them apart (a
// usage naming its value, as `N`, hides the type), so the source is read.
func TestNoFlagReadsIntegersInGoSyntax(t *testing.T) {
	goReaders := map[string]bool{"Int": true, "Int64": true, "Uint": true, "Uint64": true,
		"IntVar": true, "Int64Var": true, "UintVar": true, "Uint64Var": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && goReaders[sel.Sel.Name] {
				if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "fs" || id.Name == "flag") {
					t.Errorf("%s: %s.%s defines an integer flag read in Go's syntax (010 is 8, 0x10 16): use intVar", fset.Position(call.Pos()), id.Name, sel.Sel.Name)
				}
			}
			return true
		})
	}
}

// intFlag itself: decimal digits with an optional sign, nothing else.
func TestIntFlagSet(t *testing.T) {
	for in, want := range map[string]int{"010": 10, "0": 0, "00": 0, "08": 8, "+5": 5, "-3": -3, "10000": 10000} {
		var n intFlag
		if err := n.Set(in); err != nil || int(n) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, n, err, want)
		}
	}
	for _, in := range []string{"0x10", "0X10", "0o10", "0b10", "1_000", "1e3", "1.0", " 1", "1 ", "", "99999999999999999999"} {
		var n intFlag
		if err := n.Set(in); err == nil {
			t.Errorf("Set(%q) = %d, nil; want an error", in, n)
		}
	}
}
