package conformance_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
)

// checkExpect parses a one-case suite for prompt p with expect (a YAML flow
// mapping) and no reference, and checks it against p.
func checkExpect(t *testing.T, p *prompt.Prompt, input, expect string) error {
	t.Helper()
	s, problems := conformance.ParseSuite("suite.yaml", []byte("prompt: "+p.Name+"\ncases:\n  - name: a\n"+
		"    input: "+input+"\n    expect: {"+expect+"}\n"))
	if s == nil {
		t.Fatalf("%s: %q", expect, problems)
	}
	return s.Check(p)
}

// An expectation whose value the output schema or the rules can never hold
// (a boolean field expected to be the text "yes", as YAML 1.1 wrote true; an
// enum value misspelt) fails every provider's every correct reply: a fault of
// the suite, like a misspelt pointer, refused before anything runs. The
// refusal names the case, the pointer and the value, and says how to fix it.
// Found by review.
func TestExpectationValueTheSchemaCannotHoldIsRefused(t *testing.T) {
	p, err := loadPrompts(t).Get("triage", "")
	if err != nil {
		t.Fatal(err)
	}
	const input = "{subject: Charged twice, body: My card was charged twice.}"
	for expect, wants := range map[string][]string{
		"equal: {/needs_human: yes}": {
			`case a: expect.equal[/needs_human]: "yes" can never be there in a reply that passes the schema and the rules`,
			"output schema at /needs_human: expected boolean, but got string",
			"so every reply would fail this case; write a value triage@3's output schema (../prompts/triage/output.schema.json) and rules allow there",
			"(a suite is YAML 1.2, which reads yes as text: write true or false, unquoted)",
		},
		"equal: {/category: Billing}": {
			`case a: expect.equal[/category]: "Billing" can never be there`,
			`rule enum at /category: "Billing" is not one of ["billing", "technical", "account", "shipping", "feedback", "other"]`,
		},
		"one_of: {/priority: [hgih, urgnet]}": {
			`case a: expect.one_of[/priority]: none of "hgih", "urgnet" can be there`,
			`"hgih": rule enum at /priority: "hgih" is not one of ["low", "normal", "high", "urgent"]`,
			`"urgnet": rule enum at /priority`,
			"list values triage@3's output schema",
		},
		"equal: {/summary: too short}": {`rule range at /summary`},
		"equal: {/category: 7}":        {"output schema at /category: expected string, but got number"},
	} {
		err := checkExpect(t, p, input, expect)
		if err == nil {
			t.Errorf("expect %s: the suite is accepted, though no reply that passes the output schema can meet it", expect)
			continue
		}
		for _, want := range wants {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("expect %s: Check = %v\nwant it to say %q", expect, err, want)
			}
		}
	}
	// Values a reply can hold are accepted: a one_of with one such value
	// among typos can still be met.
	for _, expect := range []string{
		"equal: {/needs_human: true, /category: billing, /summary: Customer was charged twice.}",
		"one_of: {/priority: [hgih, high]}",
	} {
		if err := checkExpect(t, p, input, expect); err != nil {
			t.Errorf("expect %s: refused: %v", expect, err)
		}
	}
}

// The consequence the refusal prevents: no reply can meet /needs_human: "yes"
// (the schema says boolean), so the run would record a failing run and
// withdraw the provider's pass. It refuses to start instead; the pass
// stands. Found by review.
func TestImpossibleExpectationDoesNotWithdrawAPass(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.add("good", oracle(e.answers, nil))
	e.run(t, conformance.Options{PromptNames: []string{"triage"}})
	p := mustPrompt(t, e, "triage")
	gate := conformance.NewGate(e.st, conformance.GateFallbacks, time.Hour, conformance.CacheFor(0))
	if ok, why := gate.Allow(ctx, "good", p, store.RoleFailover); !ok {
		t.Fatal(why)
	}
	bad, problems := conformance.ParseSuite("suite.yaml", []byte("prompt: triage\ncases:\n  - name: a\n"+
		"    input: {subject: Charged twice, body: My card was charged twice.}\n    expect: {equal: {/needs_human: yes}}\n"))
	if bad == nil {
		t.Fatal(problems)
	}
	e.suites["triage"] = bad
	rep, err := conformance.Run(ctx, conformance.Options{Store: e.st, TargetDigests: testTargetDigests, Targets: e.targets, Prompts: e.prompts, Suites: e.suites,
		Providers: []string{"good"}, PromptNames: []string{"triage"}, RouterVersion: "test"})
	if err == nil || !strings.Contains(err.Error(), "faults of the suites") || !strings.Contains(err.Error(), `case a: expect.equal[/needs_human]: "yes"`) {
		ok, why := gate.Allow(ctx, "good", p, store.RoleFailover)
		t.Fatalf("Run = %v (report %+v); gate now: %v %q", err, rep, ok, why)
	}
	var runs int
	if err := e.db.Pool.QueryRow(ctx, `SELECT count(*) FROM conformance_runs`).Scan(&runs); err != nil || runs != 1 {
		t.Fatalf("%d runs recorded (%v), want only the earlier pass", runs, err)
	}
	if ok, why := gate.Allow(ctx, "good", p, store.RoleFailover); !ok {
		t.Fatalf("the earlier pass no longer admits the provider: %s", why)
	}
}

// Where the expectation's pointer goes through an array ("*" in a rule path
// reaches its elements) and where the schema refers to another definition,
// values are judged too: a negative quantity (ranges: /line_items/*/quantity
// min 0), a currency the enum and the pattern refuse, a date that is no date.
func TestExpectationValuesInsideArraysAndRefs(t *testing.T) {
	p, err := loadPrompts(t).Get("invoice", "")
	if err != nil {
		t.Fatal(err)
	}
	const input = `{text: "Invoice 7. Total due (USD): $10.00"}`
	for expect, want := range map[string]string{
		"equal: {/line_items/0/quantity: -1}":   "rule range at /line_items/0/quantity",
		"equal: {/line_items/2/description: 3}": "output schema at /line_items/2/description: expected string, but got number",
		"equal: {/currency: usd}":               `rule enum at /currency: "usd" is not one of`,
		"equal: {/issue_date: 2025-02-30}":      `output schema at /issue_date: '2025-02-30' is not valid 'date'`,
	} {
		err := checkExpect(t, p, input, expect)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("expect %s: Check = %v\nwant it to say %q", expect, err, want)
		}
	}
	if err := checkExpect(t, p, input, "equal: {/line_items/0/amount: 10.00, /line_items/0/quantity: 1, /total: 10, /issue_date: 2025-02-28, /currency: USD}"); err != nil {
		t.Errorf("values a reply can hold are refused: %v", err)
	}
}

// writePrompt loads a prompt "p" with the output schema and rules given (and
// files beside the schema), rendering the input's x.
func writePrompt(t *testing.T, schema, rules string, files map[string]string) *prompt.Prompt {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files["output.schema.json"] = schema
	files["prompt.yaml"] = "name: p\nversion: \"1\"\nmax_tokens: 100\nresponse_format: json_object\noutput_schema: output.schema.json\n" +
		"messages:\n  - role: user\n    content: \"Answer in JSON: {{ .x }}\"\n" + rules
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := prompt.LoadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	p, err := set.Get("p", "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Only what no reply can hold is refused. The value is judged against the
// whole schema at its pointer (its anyOf, oneOf and if/then included), found
// through properties, items, $ref (to another file too), allOf and
// additionalProperties, and against the rules there; a whole number where
// the schema wants an integer and null where the type allows it are fine.
// Where the pointer passes through a branch of an anyOf (which need not
// apply) or an object that declares nothing, the value is not judged.
func TestExpectationValuesAreNotOverRefused(t *testing.T) {
	p := writePrompt(t, `{
  "type": "object",
  "properties": {
    "n": {"type": "integer"},
    "x": {"type": "number", "minimum": 0},
    "maybe": {"type": ["string", "null"]},
    "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    "choice": {"oneOf": [{"const": "a"}, {"const": "b"}]},
    "cond": {"if": {"type": "string"}, "then": {"minLength": 5}},
    "when": {"type": "string", "format": "date"},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
    "flag": {"type": "boolean"},
    "status": {"$ref": "status.json"},
    "open": {"type": "object"},
    "obj": {"type": "object", "properties": {"k": {"type": "string"}}, "additionalProperties": {"type": "integer"}},
    "level": {"type": "string"},
    "alt": {"anyOf": [{"type": "object", "properties": {"v": {"type": "string"}}}, {"type": "object", "properties": {"v": {"type": "integer"}}}]}
  },
  "allOf": [{"properties": {"n": {"maximum": 10}}}]
}`, "rules:\n  no_extra_keys: false\n  enums:\n    /level: [low, high]\n  ranges:\n    /x: {max: 100}\n    /tags: {max: 3}\n",
		map[string]string{"status.json": `{"type": "string", "enum": ["open", "closed"]}`})
	const input = "{x: go}"
	for _, expect := range []string{
		"equal: {/n: 3.0, /x: 12.50, /maybe: null, /either: 5, /when: 2025-03-03, /tags/0: x, /flag: false}",
		"equal: {/either: s, /choice: b, /cond: abcde, /open/anything: [1], /obj/k: s, /obj/other: 1, /status: open}",
		"equal: {/tags/2: y, /tags: [x, y, x], /level: high, /alt/v: 5}",
		"equal: {/alt/v: s}",
		"equal: {/alt/v: true}",
		"one_of: {/level: [lwo, low], /status: [opne, closed]}",
	} {
		if err := checkExpect(t, p, input, expect); err != nil {
			t.Errorf("expect %s: refused: %v", expect, err)
		}
	}
	for expect, want := range map[string]string{
		"equal: {/n: 3.5}":              "output schema at /n: expected integer, but got number",
		"equal: {/n: 11}":               "output schema at /n: must be <= 10 but found 11",
		"equal: {/x: -1}":               "output schema at /x: must be >= 0 but found -1",
		"equal: {/x: 101}":              "rule range at /x",
		"equal: {/maybe: 3}":            "output schema at /maybe: expected string or null, but got number",
		"equal: {/tags: [x, z]}":        `output schema at /tags/1: value must be one of "x", "y"`,
		"equal: {/tags/1: z}":           `output schema at /tags/1: value must be one of "x", "y"`,
		"equal: {/tags: [x, y, x, y]}":  "rule range at /tags: item count 4 is above the maximum 3",
		"equal: {/either: true}":        "output schema at /either: expected string, but got boolean; output schema at /either: expected integer, but got boolean",
		"equal: {/choice: c}":           `output schema at /choice: value must be "a"`,
		"equal: {/cond: ab}":            "output schema at /cond: length must be >= 5, but got 2",
		"equal: {/status: opne}":        `output schema at /status: value must be one of "open", "closed"`,
		"equal: {/obj/other: s}":        "output schema at /obj/other: expected integer, but got string",
		"equal: {/flag: off}":           "reads off as text: write true or false",
		"one_of: {/level: [lwo, hgih]}": `none of "lwo", "hgih" can be there`,
	} {
		err := checkExpect(t, p, input, expect)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("expect %s: Check = %v\nwant it to say %q", expect, err, want)
		}
	}
}
