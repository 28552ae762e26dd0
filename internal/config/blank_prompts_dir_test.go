package config

import (
	"strings"
	"testing"
)

// prompts_dir written with a blank value (a template variable that did not
// render) is refused, naming its line: read as left out, it meant the
// optional default, and a router without its prompts started silently.
// Left out, it is still the default; written, it is used as written.
func TestBlankPromptsDirRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, written := range []string{`prompts_dir: ""`, `prompts_dir: "  "`, `prompts_dir:`, `prompts_dir: ~`, `prompts_dir: null`} {
		c, err := Parse([]byte(defaultsBase + written + "\n"))
		want := "line 9: prompts_dir is written but blank: leave the key out for the default"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: Parse = %+v, %v; want an error containing %q", written, c, err, want)
		}
	}
	c, err := Parse([]byte(defaultsBase))
	if err != nil || c.PromptsDir != "prompts" || !c.PromptsDirDefault {
		t.Fatalf("left out: Parse = %+v, %v; want the default prompts", c, err)
	}
	c, err = Parse([]byte(defaultsBase + "prompts_dir: ../prompts\n"))
	if err != nil || c.PromptsDir != "../prompts" || c.PromptsDirDefault {
		t.Fatalf("written: Parse = %+v, %v; want ../prompts", c, err)
	}
}
