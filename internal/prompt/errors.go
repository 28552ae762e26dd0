package prompt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/routerhq/router/internal/contract"
)

// Errors of Set.Get, for errors.Is. The returned error also lists what is loaded.
var (
	ErrUnknownPrompt  = errors.New("unknown prompt")
	ErrUnknownVersion = errors.New("unknown prompt version")
)

// Problem is one thing wrong with one manifest.
type Problem struct {
	File    string // the manifest, e.g. prompts/triage/prompt.yaml
	Field   string // e.g. messages[1].content, output_schema, rules.sums[0].total
	Message string
}

func (p Problem) String() string {
	if p.Field == "" {
		return p.File + ": " + p.Message
	}
	return p.File + ": " + p.Field + ": " + p.Message
}

// LoadError lists every problem LoadDir found, one per line.
type LoadError struct {
	Problems []Problem
}

func (e *LoadError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// InputError is a job input the prompt cannot accept. It is the caller's fault.
type InputError struct {
	Prompt     string // name@version
	Violations []contract.Violation
}

func (e *InputError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return fmt.Sprintf("input rejected by prompt %s: %s", e.Prompt, strings.Join(parts, "; "))
}

// RenderError is a message that could not be rendered from the input: a missing
// value, a failing template function, or an empty result. It happens before any
// provider is called; it is the caller's fault when the input lacks a value.
type RenderError struct {
	Prompt string // name@version
	Field  string // messages[i].content
	Err    error
}

func (e *RenderError) Error() string {
	return fmt.Sprintf("prompt %s: %s: %v", e.Prompt, e.Field, e.Err)
}

func (e *RenderError) Unwrap() error { return e.Err }
