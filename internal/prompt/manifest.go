package prompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"

	"github.com/routerhq/router/internal/contract"
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
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			report("", "not valid YAML: %v", err)
			return nil
		}
		for _, line := range te.Errors {
			field, msg := describeYAMLError(line)
			report(field, "%s", msg)
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
		report("name", "required; use the directory name, like %q", filepath.Base(dir))
	case !nameRE.MatchString(m.Name):
		report("name", "%q must be lowercase letters, digits, '_', '.' or '-' (at most 64)", m.Name)
	}
	switch {
	case m.Version == "":
		report("version", `required; a string such as "1" (bump it whenever messages, schemas or rules change)`)
	case !versionRE.MatchString(m.Version):
		report("version", "%q must be letters, digits, '_', '.', '+' or '-' (at most 64)", m.Version)
	}
	if p.Route == "" {
		p.Route = "default"
	}
	if t := m.Temperature; t != nil && !(*t >= 0 && *t <= 2) { // NaN (YAML's .nan) too
		report("temperature", "%v is outside 0..2", *t)
	}
	if m.MaxTokens <= 0 {
		report("max_tokens", "required and positive: the most tokens the answer may use (it is reserved in the context window)")
	}
	switch m.ResponseFormat {
	case "":
		p.Format = FormatJSONSchema
	case FormatJSONSchema, FormatJSONObject, FormatNone:
	default:
		report("response_format", "%q is not one of json_schema, json_object, none", m.ResponseFormat)
	}

	if len(m.Messages) == 0 {
		report("messages", "list at least one message (role and content)")
	}
	mentionsJSON := false
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
			report(field+".content", "%v", err)
			continue
		}
		mentionsJSON = mentionsJSON || strings.Contains(strings.ToLower(msg.Content), "json")
		p.Messages = append(p.Messages, MessageTemplate{Role: msg.Role, Content: msg.Content})
		p.templates = append(p.templates, t)
		p.static = append(p.static, staticText(t))
	}
	if p.Format == FormatJSONObject && len(m.Messages) > 0 && !mentionsJSON {
		report("response_format", `json_object needs the word "JSON" in the messages (OpenAI-compatible providers reject the request otherwise)`)
	}

	if m.OutputSchema == "" {
		report("output_schema", "required: the path, beside prompt.yaml, of the JSON Schema the output must match")
	} else if b, path, ok := readSchema(dir, m.OutputSchema, "output_schema", report); ok {
		p.OutputSchema, p.OutputSchemaFile = b, path
		if s, err := contract.CompileSchema(b, path); err != nil {
			report("output_schema", "%v", err)
		} else {
			var buf bytes.Buffer
			_ = json.Compact(&buf, b) // b compiled, so it is JSON
			p.formatBytes = buf.Bytes()
			v, err := contract.NewValidatorFromSchema(s, m.Rules)
			if err != nil {
				reportRules(err, report)
			}
			p.validator = v
		}
	}
	if m.InputSchema != "" {
		if b, path, ok := readSchema(dir, m.InputSchema, "input_schema", report); ok {
			p.InputSchema, p.InputSchemaFile = b, path
			if s, err := contract.CompileSchema(b, path); err != nil {
				report("input_schema", "%v", err)
			} else {
				p.input = s
				p.optionalKeys = optional(s.Properties(), s.Required())
			}
		}
	}
	if len(*problems) > n {
		return nil
	}
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

// readSchema reads a schema file named relative to the manifest's directory.
func readSchema(dir, rel, field string, report func(string, string, ...any)) ([]byte, string, bool) {
	if filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
		report(field, "%q must be a relative path inside %s", rel, dir)
		return nil, "", false
	}
	path := filepath.Join(dir, rel)
	b, err := os.ReadFile(path)
	if err != nil {
		report(field, "%v", err)
		return nil, "", false
	}
	return b, path, true
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

var yamlFieldRE = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (\S+)$`)

// yamlTypes maps the types strict decoding can meet to their place in the
// manifest, to name the field of an unknown key.
var yamlTypes = map[string]struct {
	prefix string
	typ    reflect.Type
}{
	"prompt.manifest":      {"", reflect.TypeFor[manifest]()},
	"prompt.messageSpec":   {"messages[].", reflect.TypeFor[messageSpec]()},
	"contract.Rules":       {"rules.", reflect.TypeFor[contract.Rules]()},
	"contract.Range":       {"rules.ranges[].", reflect.TypeFor[contract.Range]()},
	"contract.EqualRule":   {"rules.equal[].", reflect.TypeFor[contract.EqualRule]()},
	"contract.ProductRule": {"rules.products[].", reflect.TypeFor[contract.ProductRule]()},
	"contract.SumRule":     {"rules.sums[].", reflect.TypeFor[contract.SumRule]()},
}

// describeYAMLError turns one strict-decoding error into a field and a message.
func describeYAMLError(line string) (field, msg string) {
	m := yamlFieldRE.FindStringSubmatch(line)
	if m == nil {
		return "", line
	}
	lineNo, _ := strconv.Atoi(m[1])
	t, ok := yamlTypes[m[3]]
	if !ok {
		return m[2], fmt.Sprintf("unknown field (line %d)", lineNo)
	}
	return t.prefix + m[2], fmt.Sprintf("unknown field (line %d); known fields: %s", lineNo, strings.Join(yamlFields(t.typ), ", "))
}

func yamlFields(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag != "" && tag != "-" {
			names = append(names, tag)
		}
	}
	sort.Strings(names)
	return names
}
