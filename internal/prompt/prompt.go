// Package prompt owns prompt manifests: loading prompts/<name>/prompt.yaml with its
// schema files, validating them at start, checking a job's input against the input
// schema, and rendering the messages from Go templates over the input.
//
// Everything that can be checked without an input is checked by LoadDir, and all
// problems of all manifests are reported together. A schema file that refers
// to files beside it is made self-contained at load (schemainline.go): the
// schema providers receive and the one the router validates with are the same. Rendering is strict: a value the
// template needs and the input lacks is an error before any provider is called,
// never "<no value>" in a prompt.
//
// A loaded Prompt is immutable and safe for concurrent use.
//
// It must not call providers or touch the database.
package prompt

import (
	"text/template"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/providers"
)

// Response formats a manifest can ask for.
const (
	FormatJSONSchema = "json_schema" // structured output constrained by the output schema (default)
	FormatJSONObject = "json_object" // any JSON object; the schema is checked after
	FormatNone       = "none"        // plain text; the schema is checked after
)

// MessageTemplate is one message of a manifest as written: Content is template
// source.
type MessageTemplate struct {
	Role    string
	Content string
}

// Prompt is one loaded, checked manifest.
type Prompt struct {
	Name        string
	Version     string
	Description string
	// Route is the route used when the job does not name one ("default" if unset).
	Route string
	// Dir is the directory holding prompt.yaml; File is the manifest's path.
	Dir  string
	File string
	// Model overrides the provider's configured model when non-empty.
	Model       string
	Temperature *float32
	MaxTokens   int
	Seed        *int
	// Format is response_format: FormatJSONSchema, FormatJSONObject or FormatNone.
	Format string
	// Strict asks providers that support it to enforce the schema strictly
	// (OpenAI "strict": the schema must then meet that provider's restrictions).
	Strict   bool
	Messages []MessageTemplate
	// OutputSchema and InputSchema are the schema files' bytes, without a
	// byte-order mark (InputSchema is nil when the manifest has none); the
	// *File fields are their paths.
	OutputSchema     []byte
	OutputSchemaFile string
	InputSchema      []byte
	InputSchemaFile  string
	Rules            contract.Rules
	// Digest is the SHA-256 (hex) of the prompt's content, computed at load:
	// its messages, model, max_tokens, seed, response format, schemas and
	// rules (contentDigest). Conformance runs record it, and the gate counts
	// a pass only for the content it was recorded against, so an edit that
	// forgets to bump the version is caught. "" for a Prompt not loaded by
	// LoadDir (nothing is compared then).
	Digest string
	// sameDigests are the digests of the same content with a rule's default
	// written or left out (equivalentDigests); SameContent counts them.
	sameDigests []string

	templates    []*template.Template
	static       []string  // per template, its text when it has no actions (see staticText), else ""
	saysNil      []bool    // per template, its own text says "<nil>" (render then does not refuse a printed one)
	works        *workPool // what render executes: the templates, counting their steps (render_work.go)
	jsonAlways   bool      // a message prints "JSON" for every input (alwaysJSON): render need not look
	validator    *contract.Validator
	input        *contract.Schema
	optionalKeys []string // properties the input schema declares (at the top or in a branch: contract.Schema.MayHaveProperties) but does not require
	formatBytes  []byte   // compact, self-contained output schema for the provider (loadSchemaFile)
	formatText   string   // formatBytes as text, made once at load (FormatText)
}

// Validator returns the output validator (schema and rules), compiled once at load.
func (p *Prompt) Validator() *contract.Validator { return p.validator }

// FormatText is the compact output schema sent to providers for a
// json_schema format, as text made once at load ("" otherwise): the router's
// context-window check counts it for every job without copying it again.
func (p *Prompt) FormatText() string {
	if p.Format != FormatJSONSchema {
		return ""
	}
	return p.formatText
}

// ID is "name@version", the form used in messages.
func (p *Prompt) ID() string { return p.Name + "@" + p.Version }

// ProviderResponseFormat is the structured-output request for providers: the
// output schema for json_schema, a bare JSON object for json_object, nil for none.
func (p *Prompt) ProviderResponseFormat() *providers.ResponseFormat {
	switch p.Format {
	case FormatJSONSchema:
		return &providers.ResponseFormat{Type: FormatJSONSchema, Name: schemaName(p.Name), Schema: p.formatBytes, Strict: p.Strict}
	case FormatJSONObject:
		return &providers.ResponseFormat{Type: FormatJSONObject}
	}
	return nil
}

// schemaName fits a prompt name to the provider rule for schema names
// (OpenAI: ^[a-zA-Z0-9_-]{1,64}$).
func schemaName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}
