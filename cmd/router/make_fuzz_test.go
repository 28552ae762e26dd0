package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// README: `make fuzz` runs each Go fuzz test, so every Fuzz function of the
// module is in the Makefile's FUZZ_TARGETS (two added later were never
// fuzzed). Found by review.
func TestMakeFuzzListsEveryFuzzTest(t *testing.T) {
	root := filepath.Join("..", "..")
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(\./[\w/]+):(Fuzz\w+)`).FindAllStringSubmatch(string(mk), -1) {
		listed[strings.TrimPrefix(m[1], "./")+":"+m[2]] = true
	}
	if len(listed) == 0 {
		t.Fatal("no FUZZ_TARGETS found in the Makefile")
	}
	fn := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	found := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for _, m := range fn.FindAllStringSubmatch(string(b), -1) {
			found++
			if !listed[filepath.ToSlash(rel)+":"+m[1]] {
				t.Errorf("%s:%s is not in the Makefile's FUZZ_TARGETS, so `make fuzz` never fuzzes it", rel, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("found no Fuzz function: the walk is wrong")
	}
}
