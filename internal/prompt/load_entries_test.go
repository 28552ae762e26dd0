package prompt_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// symlink makes a symbolic link at dir/name pointing at target.
func symlink(t *testing.T, target, dir, name string) string {
	t.Helper()
	link := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// An entry of the prompts directory that cannot be followed — a link to a
// prompt's directory, or to its prompt.yaml, whose target is missing, or a
// loop of links — was skipped in silence: the prompt the operator deployed
// was absent, and each of its jobs failed later as an unknown prompt. Loading
// refuses, naming the path, what is wrong and the fix, beside the problems of
// the other prompts.
func TestLoadDir_RefusesAnEntryItCannotFollow(t *testing.T) {
	dir := t.TempDir()
	writePrompt(t, dir, "p", manifestWith(""), map[string]string{"out.json": outSchema})
	triage := symlink(t, "../shared/triage", dir, "triage")
	manifest := symlink(t, "../../deploy/invoice.yaml", dir, filepath.Join("invoice", "prompt.yaml"))
	loop := symlink(t, "loop", dir, "loop")
	long := symlink(t, strings.Repeat("x", 300), dir, "long")

	set, err := prompt.LoadDir(dir)
	var le *prompt.LoadError
	if !errors.As(err, &le) || set != nil {
		t.Fatalf("load with unfollowable entries: %v, %v; want a *LoadError and no set", set, err)
	}
	want := []string{
		triage + ": a symbolic link to ../shared/triage, which does not exist; fix or remove the link",
		manifest + ": a symbolic link to ../../deploy/invoice.yaml, which does not exist; fix or remove the link",
		loop + ": a symbolic link to loop, which leads round a loop of links; fix or remove the link",
		long + ": a symbolic link to " + strings.Repeat("x", 300) + ", which cannot be followed: file name too long; fix or remove it",
	}
	lines := strings.Split(err.Error(), "\n")
	for _, w := range want {
		found := false
		for _, line := range lines {
			found = found || line == w
		}
		if !found {
			t.Errorf("no line\n  %s\nin\n%v", w, err)
		}
	}
	if len(lines) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(lines), len(want), err)
	}
}

// What the loader leaves alone stays alone: files (a README, a link to one),
// subdirectories without a prompt.yaml, and hidden entries even when they lead
// nowhere — an editor's lock file (Emacs's .#name) is a link to nothing by
// design — or hold a prompt.yaml that does.
func TestLoadDir_StillIgnoresFilesAndHiddenEntries(t *testing.T) {
	dir := t.TempDir()
	writePrompt(t, dir, "p", manifestWith(""), map[string]string{"out.json": outSchema})
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# prompts\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, "README.md", dir, "NOTES.md")
	symlink(t, "root@host.4711:1700000000", dir, ".#README.md")
	symlink(t, "../nowhere.yaml", dir, filepath.Join(".old", "prompt.yaml"))
	if err := os.MkdirAll(filepath.Join(dir, "shared"), 0o755); err != nil {
		t.Fatal(err)
	}
	set, err := prompt.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if all := set.All(); len(all) != 1 || all[0].Name != "p" {
		t.Fatalf("loaded %v, want only p", all)
	}
}
