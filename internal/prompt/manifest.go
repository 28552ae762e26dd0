package prompt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/providers"
)

// ManifestFile is the name of the manifest inside each prompt directory.
const ManifestFile = "prompt.yaml"

// manifest is prompt.yaml as written.
type manifest struct {
	Name           string         `yaml:"name"`
	Version        string         `yaml:"version"`
	Description    string         `yaml:"description"`
	Route          string         `yaml:"route"`
	Model          string         `yaml:"model"`
	Temperature    *float32       `yaml:"temperature"`
	MaxTokens      int            `yaml:"max_tokens"`
	Seed           *int           `yaml:"seed"`
	ResponseFormat string         `yaml:"response_format"`
	Strict         bool           `yaml:"strict"`
	Messages       []messageSpec  `yaml:"messages"`
	OutputSchema   string         `yaml:"output_schema"`
	InputSchema    string         `yaml:"input_schema"`
	Rules          contract.Rules `yaml:"rules"`
}

type messageSpec struct {
	Role    string `yaml:"role"`
	Content string `yaml:"content"`
}

var (
	nameRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)
	versionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$`)
	roles     = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true}
)

// loadManifest reads and checks one manifest, appending every problem found.
func loadManifest(file string, problems *[]Problem) *Prompt {
	n := len(*problems)
	report := func(field, format string, a ...any) {
		*problems = append(*problems, Problem{File: file, Field: field, Message: fmt.Sprintf(format, a...)})
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		report("", "%v", err)
		return nil
	}
	var m manifest
	bad, ok := decodeManifest(raw, &m, report)
	if !ok {
		return nil
	}
	// check reports a problem of a field unless decoding already did: its
	// value is then zero or partial, and saying it is missing would be false.
	check := func(field, format string, a ...any) {
		if !bad[field] {
			report(field, format, a...)
		}
	}

	dir := filepath.Dir(file)
	p := &Prompt{
		Name: m.Name, Version: m.Version, Description: strings.TrimSpace(m.Description),
		Route: m.Route, Dir: dir, File: file, Model: m.Model,
		Temperature: m.Temperature, MaxTokens: m.MaxTokens, Seed: m.Seed,
		Format: m.ResponseFormat, Strict: m.Strict, Rules: m.Rules,
	}
	switch {
	case m.Name == "":
		check("name", "required; use the directory name, like %q", filepath.Base(dir))
	case !nameRE.MatchString(m.Name):
		check("name", "%q must be lowercase letters, digits, '_', '.' or '-' (at most 64)", m.Name)
	}
	switch {
	case m.Version == "":
		check("version", `required; a string such as "1" (bump it whenever messages, schemas or rules change)`)
	case !versionRE.MatchString(m.Version):
		check("version", "%q must be letters, digits, '_', '.', '+' or '-' (at most 64)", m.Version)
	}
	if p.Route == "" {
		p.Route = "default"
	}
	if t := m.Temperature; t != nil && !(*t >= 0 && *t <= 2) { // NaN (YAML's .nan) too
		check("temperature", "%v is outside 0..2", *t)
	}
	if m.MaxTokens <= 0 {
		check("max_tokens", "required and positive: the most tokens the answer may use (it is reserved in the context window)")
	}
	switch m.ResponseFormat {
	case "":
		p.Format = FormatJSONSchema
	case FormatJSONSchema, FormatJSONObject, FormatNone:
	default:
		check("response_format", "%q is not one of json_schema, json_object, none", m.ResponseFormat)
	}
	// Only a json_schema request carries Strict (ProviderResponseFormat):
	// with another format it loaded and did nothing.
	if m.Strict && (p.Format == FormatJSONObject || p.Format == FormatNone) && !bad["response_format"] {
		check("strict", "strict: true asks the provider to enforce the output schema, which only response_format: json_schema sends; with %s it would do nothing: remove it, or use json_schema", p.Format)
	}

	type parsed struct {
		i   int
		t   *template.Template
		src string
	}
	var templates []parsed
	mentionsJSON := false
	if !bad["messages"] {
		if len(m.Messages) == 0 {
			report("messages", "list at least one message (role and content)")
		}
		for i, msg := range m.Messages {
			field := fmt.Sprintf("messages[%d]", i)
			if !roles[msg.Role] {
				report(field+".role", "%q is not one of system, developer, user, assistant", msg.Role)
			}
			if strings.TrimSpace(msg.Content) == "" {
				report(field+".content", "empty; write the message text (a Go template over the input)")
				continue
			}
			t, err := template.New(fmt.Sprintf("%s %s.content", m.Name, field)).
				Option("missingkey=error").Funcs(funcs).Parse(msg.Content)
			if err != nil {
				if hint := hyphenKeyHint(msg.Content, err); hint != "" {
					report(field+".content", "%s", hint)
				} else {
					report(field+".content", "%v", err)
				}
				continue
			}
			// A call of a template defined nowhere, or a printf whose
			// literal format does not fit its arguments, fails every render
			// that reaches it (in a branch, only some), through the
			// prompt's fault: refused here wherever it sits.
			if msgs := append(undefinedCalls(t, msg.Content), printfArity(t, msg.Content)...); len(msgs) > 0 {
				for _, m := range msgs {
					report(field+".content", "%s", m)
				}
				continue
			}
			// What the template writes as written, not its source: a
			// {{/* JSON */}} comment or {{ json .items }} writes no "JSON".
			text, hasAction := templateText(t)
			if !hasAction && strings.TrimSpace(text) == "" {
				report(field+".content", "renders empty for every input (it holds only template comments or blank text); write the message text (a Go template over the input)")
				continue
			}
			// Render refuses a message that prints "<no value>" (what a
			// template prints for a null), so one whose own text says it
			// would fail every job, blamed on the caller's input.
			if strings.Contains(text, "<no value>") {
				report(field+".content", `the text says "<no value>", which is what a template prints for a null or absent value: the router refuses a rendered message containing it, so every job that renders it would fail as if its input lacked a value; write it another way, e.g. "(none)"`)
				continue
			}
			mentionsJSON = mentionsJSON || providers.MentionsJSON(text)
			p.jsonAlways = p.jsonAlways || alwaysJSON(t)
			p.Messages = append(p.Messages, MessageTemplate{Role: msg.Role, Content: msg.Content})
			p.templates = append(p.templates, t)
			p.static = append(p.static, staticText(t))
			p.saysNil = append(p.saysNil, strings.Contains(text, "<nil>"))
			templates = append(templates, parsed{i, t, msg.Content})
		}
		// A prompt with the word nowhere is refused here; one with it only
		// where some inputs do not print it (a branch, an unused define, a
		// default's literal) is refused by render for those inputs
		// (checkJSONWord), which load cannot know.
		if p.Format == FormatJSONObject && len(m.Messages) > 0 && !mentionsJSON {
			check("response_format", `json_object needs the word "JSON" in the messages' text (OpenAI-compatible providers reject the request otherwise); `+
				`a template comment or a function name such as {{ json .x }} is not sent, so write it in the text`)
		}
	}

	var outputRefs []refFile
	switch {
	case bad["output_schema"]:
	case m.OutputSchema == "":
		report("output_schema", "required: the path, beside prompt.yaml, of the JSON Schema the output must match")
	default:
		if f, ok := loadSchemaFile(dir, m.OutputSchema, "output_schema", p.Format == FormatJSONSchema, report); ok {
			p.OutputSchema, p.OutputSchemaFile, p.formatBytes = f.raw, f.path, f.compact
			p.formatText = string(f.compact)
			outputRefs = f.refs
			v, err := contract.NewValidatorFromSchema(f.schema, m.Rules)
			if err != nil && !bad["rules"] {
				reportRules(err, report)
			}
			p.validator = v
		}
	}
	var inputCompact []byte
	var inputRefs []refFile
	if m.InputSchema != "" && !bad["input_schema"] {
		f, ok := loadSchemaFile(dir, m.InputSchema, "input_schema", false, report)
		if ok && !f.schema.AdmitsObject() {
			report("input_schema", "schema %s admits no JSON object (its root is false, or its \"type\" does not include \"object\"), but a job's input is always a JSON object, so every job would be refused; give the root \"type\": \"object\" and describe the input's keys in \"properties\"", f.path)
			ok = false
		}
		if ok {
			p.InputSchema, p.InputSchemaFile, inputCompact, inputRefs = f.raw, f.path, f.compact, f.refs
			p.input = f.schema
			p.optionalKeys = optional(f.schema.MayHaveProperties(), f.schema.Required())
			if allowed, how, closed := closedProperties(f.doc); closed {
				for _, pt := range templates {
					for _, msg := range unreadableFields(pt.t, pt.src, allowed, filepath.Base(f.path), how) {
						report(fmt.Sprintf("messages[%d].content", pt.i), "%s", msg)
					}
				}
			}
		}
	}
	if len(*problems) > n {
		return nil
	}
	p.Digest = contentDigest(p, inputCompact, outputRefs, inputRefs)
	p.sameDigests = equivalentDigests(p, inputCompact, outputRefs, inputRefs)
	p.works = newWorkPool(p.templates, p.static)
	return p
}

// optional returns the declared properties that are not required.
func optional(props, required []string) []string {
	var out []string
	for _, p := range props {
		if !slices.Contains(required, p) {
			out = append(out, p)
		}
	}
	return out
}

func reportRules(err error, report func(string, string, ...any)) {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var re *contract.RuleError
		if errors.As(e, &re) {
			report("rules."+re.Field, "%v", re.Err)
		} else {
			report("rules", "%v", e)
		}
	}
}
