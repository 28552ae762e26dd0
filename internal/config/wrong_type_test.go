package config

import (
	"strings"
	"testing"
)

// A value of the wrong type is one problem, naming the setting's path and
// what it expects. It used to be yaml's Go-typed "cannot unmarshal !!str
// `2MiB` into int64" (a line, no setting), and then a second time as a range
// error claiming the file wrote 0 ("http.max_body_bytes (0)"): yaml.v3
// allocates the written-zeros shadow's pointer before it fails. Found by
// review.
func TestWrongTypeIsOneProblemNamingTheSetting(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, c := range []struct{ yaml, want string }{
		{"http: {max_body_bytes: 2MiB}\n", `line 1: http.max_body_bytes: "2MiB" is not an integer`},
		{"providers:\n  - {name: p, type: scripted, timeout: 60}\n", `line 2: providers[0].timeout: "60" is not a duration`},
		{"providers:\n  - {name: p, type: scripted, context_window: 128k}\n", `line 2: providers[0].context_window: "128k" is not an integer`},
		{"providers:\n  - {name: p, type: scripted}\nroutes:\n  default: {providers: [p], max_inflight: two}\n",
			`line 4: routes.default.max_inflight: "two" is not an integer`},
		{"providers:\n  - {name: p, type: scripted}\nroutes:\n  default: {providers: [p], max_inflight: 2.5}\n",
			`line 4: routes.default.max_inflight: "2.5" is not an integer`},
		{"providers:\n  p: {type: scripted}\n", "line 2: providers: a mapping is not a list"},
		{"providers:\n  - {name: p, type: scripted, stream: maybe}\n", `line 2: providers[0].stream: "maybe" is not true or false`},
		{"providers:\n  - {name: p, type: scripted, price: {input_per_mtok: cheap, output_per_mtok: 1}}\n", `line 2: providers[0].price.input_per_mtok: "cheap" is not a number`},
		{"http: 5\n", `line 1: http: "5" is not a mapping of settings`},
		{"listen: [a, b]\n", "line 1: listen: a list is not text"},
	} {
		_, err := Parse([]byte(c.yaml))
		if err == nil {
			t.Errorf("%q accepted", c.yaml)
			continue
		}
		lines := strings.Split(strings.TrimPrefix(err.Error(), "invalid configuration:\n  "), "\n  ")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], c.want) {
			t.Errorf("%q: want one problem starting %q, got %d:\n  %s", c.yaml, c.want, len(lines), strings.Join(lines, "\n  "))
		}
	}
}

// A wrong value inside an anchor is named once, and the other problems of the
// file are still reported with it.
func TestWrongTypeInAnAnchorNamedOnceWithTheOthers(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	_, err := Parse([]byte(`
providers:
  - &a {name: a, type: scripted, timeout: soon}
  - {<<: *a, name: b}
routes:
  default: {providers: [a, ghost]}
`))
	if err == nil {
		t.Fatal("accepted")
	}
	msg := err.Error()
	if strings.Count(msg, "soon") != 1 || !strings.Contains(msg, `providers[0].timeout: "soon" is not a duration`) ||
		!strings.Contains(msg, `"ghost" is not a configured provider`) || strings.Contains(msg, "(0s)") {
		t.Fatalf("%v", err)
	}
}

// Guard: values yaml.v3 reads into the field's type still load.
func TestRightTypesStillLoad(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte(`
providers:
  - {name: p, type: scripted, timeout: 60s, context_window: 1.28e5, stream: ~, max_retries: 0, price: {input_per_mtok: 1, output_per_mtok: 2.5}}
routes:
  default: {providers: [p], max_inflight: 3}
`))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Providers[0]; p.ContextWindow != 128000 || p.Price.OutputPerMTok != 2.5 || c.Routes["default"].MaxInflight != 3 {
		t.Fatalf("%+v", p)
	}
}
