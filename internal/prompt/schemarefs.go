package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// refFile is a file a schema refers to whose reference was left to the
// compiler (not copied in, see loadSchemaFile): it changes how answers are
// judged, so the prompt's digest covers it (contentDigest).
type refFile struct {
	// Path is the file's path relative to the prompt's directory, with
	// slashes, so the digest does not depend on where that directory is.
	Path string `json:"path"`
	// JSON is the file's content as compact JSON (white space does not count).
	JSON json.RawMessage `json:"json"`
}

// referencedFiles is every file reachable from the schema doc, read from
// file in the prompt directory dir, through a "$ref" naming another file
// (relative to the file holding it, or a file: URL), and from those files in
// turn; sorted by path. It reads more than the compiler may need (every
// "$ref", whatever keyword holds it, and whole files whatever the fragment):
// the digest then only changes more often. A file that cannot be read or is
// not JSON is left out: the compiler, which succeeded, did not need it. One
// that names a key twice in an object is an error (duplicateKeyError), as
// it is in the schema itself: the compiler reads it.
func referencedFiles(dir, file string, doc *jnode) ([]refFile, error) {
	root := filepath.Clean(file)
	seen := map[string]bool{root: true}
	var out []refFile
	var dupErr error
	var visit func(from string, n *jnode)
	visit = func(from string, n *jnode) {
		eachRef(n, func(ref string) {
			target, ok := refPath(from, ref)
			if !ok || seen[target] {
				return
			}
			seen[target] = true
			b, err := os.ReadFile(target)
			if err != nil {
				return
			}
			b = trimBOM(b)
			d, err := parseSchemaJSON(b)
			if de := (*duplicateKeyError)(nil); errors.As(err, &de) && dupErr == nil {
				dupErr = fmt.Errorf("%s: %w (referred to by \"$ref\": %q in %s)", target, err, ref, relName(root, from))
			}
			if err != nil {
				return
			}
			var buf bytes.Buffer
			if json.Compact(&buf, b) != nil {
				return
			}
			rel, err := filepath.Rel(dir, target)
			if err != nil {
				rel = target
			}
			out = append(out, refFile{Path: filepath.ToSlash(rel), JSON: buf.Bytes()})
			visit(target, d)
		})
	}
	visit(root, doc)
	if dupErr != nil {
		return nil, dupErr
	}
	slices.SortFunc(out, func(a, b refFile) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// eachRef calls f with every "$ref" string anywhere in n.
func eachRef(n *jnode, f func(string)) {
	switch n.kind {
	case 'o':
		for i, k := range n.keys {
			if s, ok := n.vals[i].str(); k == "$ref" && ok {
				f(s)
			}
			eachRef(n.vals[i], f)
		}
	case 'a':
		for _, v := range n.items {
			eachRef(v, f)
		}
	}
}

// refPath is the file the reference ref, written in the file from, names;
// ok is false for a reference into from itself or to something that is not
// a local file (a URL).
func refPath(from, ref string) (string, bool) {
	u, err := url.Parse(ref)
	if err != nil || u.Path == "" || u.Opaque != "" {
		return "", false
	}
	switch {
	case u.Scheme == "file" && (u.Host == "" || u.Host == "localhost"):
		return filepath.Clean(filepath.FromSlash(u.Path)), true
	case u.Scheme != "" || u.Host != "":
		return "", false
	case filepath.IsAbs(filepath.FromSlash(u.Path)):
		return filepath.Clean(filepath.FromSlash(u.Path)), true
	}
	return filepath.Join(filepath.Dir(from), filepath.FromSlash(u.Path)), true
}
