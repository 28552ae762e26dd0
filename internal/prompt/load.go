package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	rfcproblem "github.com/routerhq/router/internal/problem"
)

// Set is the prompts loaded from one directory, one version per name.
type Set struct {
	byName map[string]*Prompt
	all    []*Prompt
}

// EmptySet is a Set of no prompts.
func EmptySet() *Set { return &Set{byName: map[string]*Prompt{}} }

// LoadDir loads every dir/<name>/prompt.yaml (files, and subdirectories
// without one, are skipped; a symbolic link to a directory is followed). It
// checks each manifest completely — fields, templates, schema files, rules —
// and returns a *LoadError listing every problem of every manifest, one line
// each naming the file and the field. An entry it cannot follow or read (a
// symbolic link to nothing, a loop of links, a directory it may not enter) is
// a problem too, unless its name is hidden (see ignoredEntry). An empty
// directory gives an empty Set; a missing directory is an error.
func LoadDir(dir string) (*Set, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("prompts directory: %w (set prompts_dir in the config to the directory holding <name>/prompt.yaml)", err)
	}
	s := &Set{byName: map[string]*Prompt{}}
	var problems []Problem
	for _, e := range entries {
		sub := filepath.Join(dir, e.Name())
		// os.Stat follows a symbolic link: a link to a prompt's directory
		// (a deployment that links each prompt in) is a prompt directory.
		info, err := os.Stat(sub)
		if err != nil {
			// Skipped, such an entry was a prompt the operator deployed
			// missing from the router, each of its jobs refused later as
			// an unknown prompt.
			if p, ok := unreadable(sub, err); ok && !ignoredEntry(e.Name()) {
				problems = append(problems, p)
			}
			continue
		}
		if !info.IsDir() {
			continue
		}
		file := filepath.Join(sub, ManifestFile)
		if _, err := os.Stat(file); err != nil {
			if p, ok := unreadable(file, err); ok && !ignoredEntry(e.Name()) {
				problems = append(problems, p)
				continue
			}
			if alt := filepath.Join(sub, "prompt.yml"); fileExists(alt) {
				problems = append(problems, Problem{File: alt, Message: "rename to " + ManifestFile})
			}
			continue
		}
		p := loadManifest(file, &problems)
		if p == nil {
			continue
		}
		if prev, dup := s.byName[p.Name]; dup {
			problems = append(problems, Problem{File: file, Field: "name", Message: fmt.Sprintf("%q is also the name of %s; prompt names must be unique", p.Name, prev.File)})
			continue
		}
		s.byName[p.Name] = p
		s.all = append(s.all, p)
	}
	if len(problems) > 0 {
		return nil, &LoadError{Problems: problems}
	}
	sort.Slice(s.all, func(i, j int) bool { return s.all[i].Name < s.all[j].Name })
	return s, nil
}

// ignoredEntry reports whether a top-level entry of the prompts directory
// that cannot be followed or read is skipped rather than refused: hidden
// entries belong to tools (an editor's lock file, Emacs's .#name, is a
// symbolic link to nothing by design), and lost+found, at the top of a
// mounted volume, is root's alone.
func ignoredEntry(name string) bool {
	return strings.HasPrefix(name, ".") || name == "lost+found"
}

// unreadable says what is wrong with path, which os.Stat failed on with err,
// and how to fix it. It reports false when nothing is there at all (no
// prompt.yaml in a directory, or an entry removed since it was listed),
// which is not a problem.
func unreadable(path string, err error) (Problem, bool) {
	cause := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		cause = pe.Err // the path is already the Problem's
	}
	fix := "fix or remove it"
	if errors.Is(cause, fs.ErrPermission) {
		fix = "let the router's user read it and enter every directory on its path, or remove it"
	}
	if target, lerr := os.Readlink(path); lerr == nil {
		var what string
		switch {
		case errors.Is(cause, fs.ErrNotExist), errors.Is(cause, syscall.ENOTDIR):
			what, fix = "which does not exist", "fix or remove the link"
		case errors.Is(cause, syscall.ELOOP):
			what, fix = "which leads round a loop of links", "fix or remove the link"
		default:
			what = fmt.Sprintf("which cannot be followed: %v", cause)
		}
		return Problem{File: path, Message: fmt.Sprintf("a symbolic link to %s, %s; %s", target, what, fix)}, true
	}
	if errors.Is(cause, fs.ErrNotExist) {
		return Problem{}, false
	}
	return Problem{File: path, Message: fmt.Sprintf("cannot be read: %v; %s", cause, fix)}, true
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Get returns the prompt called name. version "" means the loaded version; any
// other version must equal it. Errors wrap ErrUnknownPrompt or ErrUnknownVersion
// and say what is loaded; they quote the name or version asked for clipped
// (problem.Clip): it is a caller's, up to a request body's size.
func (s *Set) Get(name, version string) (*Prompt, error) {
	p, ok := s.byName[name]
	if !ok {
		return nil, fmt.Errorf("%w %q; loaded: %s", ErrUnknownPrompt, rfcproblem.Clip(name), s.list())
	}
	if version != "" && version != p.Version {
		return nil, fmt.Errorf("%w: prompt %q is loaded at version %q, not %q", ErrUnknownVersion, name, p.Version, rfcproblem.Clip(version))
	}
	return p, nil
}

// All returns every loaded prompt, sorted by name.
func (s *Set) All() []*Prompt {
	return append([]*Prompt(nil), s.all...)
}

func (s *Set) list() string {
	if len(s.all) == 0 {
		return "none"
	}
	ids := make([]string, len(s.all))
	for i, p := range s.all {
		ids[i] = p.ID()
	}
	return strings.Join(ids, ", ")
}
