package prompt

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Set is the prompts loaded from one directory, one version per name.
type Set struct {
	byName map[string]*Prompt
	all    []*Prompt
}

// EmptySet is a Set of no prompts.
func EmptySet() *Set { return &Set{byName: map[string]*Prompt{}} }

// LoadDir loads every dir/<name>/prompt.yaml (subdirectories without one are
// skipped; a symbolic link to a directory is followed). It checks each
// manifest completely — fields, templates, schema files, rules — and returns a
// *LoadError listing every problem of every manifest, one line each naming the
// file and the field. An empty directory gives an empty Set; a missing
// directory is an error.
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
		if info, err := os.Stat(sub); err != nil || !info.IsDir() {
			continue
		}
		file := filepath.Join(sub, ManifestFile)
		if _, err := os.Stat(file); err != nil {
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

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Get returns the prompt called name. version "" means the loaded version; any
// other version must equal it. Errors wrap ErrUnknownPrompt or ErrUnknownVersion
// and say what is loaded.
func (s *Set) Get(name, version string) (*Prompt, error) {
	p, ok := s.byName[name]
	if !ok {
		return nil, fmt.Errorf("%w %q; loaded: %s", ErrUnknownPrompt, name, s.list())
	}
	if version != "" && version != p.Version {
		return nil, fmt.Errorf("%w: prompt %q is loaded at version %q, not %q", ErrUnknownVersion, name, p.Version, version)
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
