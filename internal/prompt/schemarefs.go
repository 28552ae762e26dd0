package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/routerhq/router/internal/contract"
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

// referencedFiles is, for the schema file the compiler compiled as written
// (contract.CompileSchemaReading), the documents it read besides the schema
// (docs), sorted by path: the files a "$ref" reaches, resolved as the
// compiler resolves it (against the "$id" in force, not the path of the file
// holding it), and from those in turn, and a custom "$schema" file — exactly
// the files the compiled schema uses, no more (a "$ref" inside "enum", or one
// that an "$id" steers elsewhere, names no file the compiler reads). Paths
// are relative to the prompt directory dir. A document that names a key
// twice in an object is an error (duplicateKeyError), as it is in the schema
// itself.
func referencedFiles(dir, file string, docs []contract.Document) ([]refFile, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	out := make([]refFile, 0, len(docs))
	for _, d := range docs {
		name := d.URL
		if u, err := url.Parse(d.URL); err == nil && u.Scheme == "file" {
			name = filepath.FromSlash(u.Path)
			if rel, err := filepath.Rel(absDir, name); err == nil {
				name = filepath.ToSlash(rel)
			}
		}
		b := trimBOM(d.Bytes)
		if _, err := parseSchemaJSON(b); errors.As(err, new(*duplicateKeyError)) {
			return nil, fmt.Errorf("%s: %w (a file the compiler reads for the schema %s)", filepath.Join(dir, filepath.FromSlash(name)), err, filepath.Base(file))
		}
		var buf bytes.Buffer
		if json.Compact(&buf, b) != nil { // the compiler took it, so it is JSON; else its bytes count
			s, _ := json.Marshal(string(b))
			buf.Write(s)
		}
		out = append(out, refFile{Path: name, JSON: buf.Bytes()})
	}
	slices.SortFunc(out, func(a, b refFile) int { return strings.Compare(a.Path, b.Path) })
	return slices.CompactFunc(out, func(a, b refFile) bool { return a.Path == b.Path }), nil
}
