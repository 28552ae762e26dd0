package config

import (
	"strings"
	"testing"
)

// A second document after --- would be silently ignored: it is refused, in
// the same message as the first document's problems.
func TestSecondDocumentRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, "listne: x\n---\nlisten: 127.0.0.1:1\n",
		"line 3: another YAML document starts here", "merge its settings into the first document", "listne is not a known setting")
	mustRefuse(t, "listen: 127.0.0.1:1\n---\n{{\n", "a further YAML document follows a --- line and cannot be read")
	// A document after an empty one is found too.
	mustRefuse(t, "listen: 127.0.0.1:1\n---\n---\nlog: {level: debug}\n", "line 4: another YAML document starts here")
	for _, y := range []string{"---\nlisten: 127.0.0.1:1\n", "listen: 127.0.0.1:1\n---\n", "listen: 127.0.0.1:1\n---\n# nothing\n", "listen: 127.0.0.1:1\n...\n"} {
		if _, err := Parse([]byte(y)); err != nil {
			t.Errorf("%q: %v", y, err)
		}
	}
}

// Merge keys work as yaml.v3 resolves them: merged settings apply, explicit
// ones win, and an unknown key inside a merged mapping is still named.
func TestMergeKeys(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse([]byte(`
providers:
  - &base {name: a, type: openai, base_url: "http://x/v1", model: m, timeout: 20s, breaker: {consecutive_failures: 3}}
  - {<<: *base, name: b}
  - <<: [{max_retries: 4}, *base]
    name: c
routes:
  default: {providers: [a, b, c]}
`))
	if err != nil {
		t.Fatal(err)
	}
	b, cp := c.Providers[1], c.Providers[2]
	if b.Name != "b" || b.Type != "openai" || b.Timeout.D().Seconds() != 20 || b.Breaker.ConsecutiveFailures != 3 ||
		cp.Name != "c" || *cp.MaxRetries != 4 || cp.BaseURL != "http://x/v1" {
		t.Fatalf("merged providers: %+v %+v", b, cp)
	}
	_, err = Parse([]byte(`
providers:
  - &base {name: a, type: scripted, timout: 5s}
  - {<<: *base, name: b}
  - <<: {name: c, type: scripted, modle: x}
`))
	if err == nil {
		t.Fatal("unknown keys in merged mappings accepted")
	}
	msg := err.Error()
	if !strings.Contains(msg, "providers[0].timout is not a known setting") || !strings.Contains(msg, "providers[2].modle is not a known setting") {
		t.Fatalf("unknown keys of merged mappings not named:\n%v", err)
	}
	if n := strings.Count(msg, "timout"); n != 1 {
		t.Fatalf("an anchor's unknown key reported %d times:\n%v", n, err)
	}
	if strings.Contains(msg, "<<") {
		t.Fatalf("the merge key itself refused:\n%v", err)
	}
}
