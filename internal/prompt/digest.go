package prompt

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/routerhq/router/internal/contract"
)

// digestVersion names the canonical form hashed by contentDigest; change it
// whenever that form changes, so that no two forms share a digest.
const digestVersion = "prompt-digest/1"

// contentDigest is the SHA-256 (hex) of what defines the prompt's behaviour
// towards providers and its judgement of their answers: the messages (role
// and template source, byte for byte: their text is the prompt), the model,
// max_tokens, seed, response format and strictness, the output and input
// schemas as self-contained compact JSON (so white space in a schema file
// does not count, and a file it refers to does: copied in, or, when the
// router's compiler follows the reference itself, each file that compiler
// reads, through "$ref" resolved against any "$id" or a custom "$schema", as
// compact JSON keyed by its path relative to the prompt directory),
// and the rules in a canonical form (map order, unset versus default
// booleans, repeated custom names and the order of enum values do not count;
// a range bound counts as written where its float64 is not its exact value;
// a product or sum rule's default tolerance, written or not, does count here,
// and Prompt.SameContent takes the other spellings as the same content:
// equivalentDigests). It does not depend on how the YAML
// was written, where the file is, or on the process: every replica that loads
// the same prompt computes the same digest.
//
// Left out: name and version (the conformance results are keyed on them
// already), description and route (they change no request and no
// judgement), and temperature (conformance runs use the suite's).
//
// The referenced files are omitted from the hashed form when there are none,
// so a prompt without such references keeps the digest it had before they
// were covered (its form is unchanged; one with them has an extra member, so
// the two forms cannot share a digest).
func contentDigest(p *Prompt, inputSchema []byte, outputRefs, inputRefs []refFile) string {
	return digestWithRules(p, p.Rules, inputSchema, outputRefs, inputRefs)
}

// digestWithRules is contentDigest of p with rules in place of p.Rules.
func digestWithRules(p *Prompt, rules contract.Rules, inputSchema []byte, outputRefs, inputRefs []refFile) string {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	canon := struct {
		Form         string          `json:"form"`
		Model        string          `json:"model"`
		MaxTokens    int             `json:"max_tokens"`
		Seed         *int            `json:"seed"`
		Format       string          `json:"format"`
		Strict       bool            `json:"strict"`
		Messages     []message       `json:"messages"`
		OutputSchema json.RawMessage `json:"output_schema"`
		InputSchema  json.RawMessage `json:"input_schema"`
		Rules        string          `json:"rules"`
		OutputRefs   []refFile       `json:"output_schema_refs,omitempty"`
		InputRefs    []refFile       `json:"input_schema_refs,omitempty"`
	}{
		Form: digestVersion, Model: p.Model, MaxTokens: p.MaxTokens, Seed: p.Seed, Format: p.Format, Strict: p.Strict,
		OutputSchema: rawOrNull(p.formatBytes), InputSchema: rawOrNull(inputSchema), Rules: rulesText(rules),
		OutputRefs: outputRefs, InputRefs: inputRefs,
	}
	for _, m := range p.Messages {
		canon.Messages = append(canon.Messages, message(m))
	}
	b, err := json.Marshal(canon)
	if err != nil { // the schemas are compact JSON and the rest plain values: cannot happen
		b = fmt.Appendf(nil, "%s %v", digestVersion, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func rawOrNull(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// rulesText is the rules in a canonical text form. It is written by hand
// because a range may be infinite (min: -.inf), which JSON cannot hold.
func rulesText(r contract.Rules) string {
	rest := contract.Rules{Equal: r.Equal, Products: r.Products, Sums: r.Sums}
	rest.Custom = slices.Compact(slices.Sorted(slices.Values(r.Custom)))
	b, err := json.Marshal(rest) // strings and finite tolerances (checked at load)
	if err != nil {
		b = []byte(err.Error())
	}
	s := fmt.Sprintf("no_extra_keys=%t allow_fenced=%t %s", r.NoExtraKeysEnabled(), r.AllowFencedEnabled(), b)
	for _, path := range sortedKeys(r.Ranges) {
		rg := r.Ranges[path]
		s += fmt.Sprintf("\nrange %q %s %s", path, bound(rg.Min), bound(rg.Max))
		// A bound is compared as written (contract.Range.Written), and two
		// written bounds can read as one float64 (100 and
		// 100.00000000000000001). Its text is added only where it is not
		// the float64's exact value, so the form of every other range, and
		// the digest of every prompt without such a bound, stays as it was.
		lo, hi := rg.Written()
		lo, hi = unlessBound(lo, rg.Min), unlessBound(hi, rg.Max)
		if lo != "" || hi != "" {
			s += fmt.Sprintf(" written %q %q", lo, hi)
		}
	}
	for _, path := range sortedKeys(r.Enums) {
		vals := make([]string, len(r.Enums[path]))
		for i, v := range r.Enums[path] {
			vals[i] = enumValue(v)
		}
		sort.Strings(vals)
		s += fmt.Sprintf("\nenum %q %q", path, vals)
	}
	return s
}

// unlessBound is text, "" when it is what bound writes for f (Written
// already leaves out a bound its float64 holds exactly; this keeps the
// digest's promise local).
func unlessBound(text string, f *float64) string {
	if text == bound(f) {
		return ""
	}
	return text
}

func bound(f *float64) string {
	if f == nil {
		return "open"
	}
	return strconv.FormatFloat(*f, 'g', -1, 64)
}

// enumValue is one allowed value as JSON, or (an infinite number) as Go
// writes it with its type.
func enumValue(v any) string {
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
