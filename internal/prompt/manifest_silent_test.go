package prompt_test

import (
	"strings"
	"testing"
)

// YAML decodes a number with a fraction into an int field by dropping the
// fraction: max_tokens: 100.5 loaded as 100 and seed: 7.5 as 7, silently.
// Both are refused as a value of the wrong type is, naming the line, and
// alone (max_tokens: 0.5 does not also say "required").
func TestManifestWholeNumberFieldRefusesAFraction(t *testing.T) {
	for _, c := range []struct{ manifest, field, want string }{
		{strings.Replace(manifestWith(""), "max_tokens: 100", "max_tokens: 100.5", 1), "max_tokens", "line 3: the number 100.5, where a whole number is expected"},
		{strings.Replace(manifestWith(""), "max_tokens: 100", "max_tokens: 0.5", 1), "max_tokens", "line 3: the number 0.5, where a whole number is expected"},
		{manifestWith("seed: 7.5\n"), "seed", "line 8: the number 7.5, where a whole number is expected"},
		{manifestWith("<<: {seed: 1.25}\n"), "seed", "line 8: the number 1.25, where a whole number is expected"},
	} {
		_, file, err := loadOne(t, c.manifest, nil)
		if err == nil {
			t.Errorf("%s loaded", c.manifest)
			continue
		}
		if got, want := err.Error(), file+": "+c.field+": "+c.want; got != want {
			t.Errorf("LoadDir =\n%s\nwant\n%s", got, want)
		}
	}
	// A whole number written as a float is that number.
	for _, v := range []string{"1e2", "100.0", "0x64"} {
		set, _, err := loadOne(t, strings.Replace(manifestWith("seed: "+v+"\n"), "max_tokens: 100", "max_tokens: "+v, 1), nil)
		if err != nil {
			t.Errorf("%s: %v", v, err)
			continue
		}
		if p, _ := set.Get("p", ""); p.MaxTokens != 100 || p.Seed == nil || *p.Seed != 100 {
			t.Errorf("%s: max_tokens %d, seed %v", v, p.MaxTokens, p.Seed)
		}
	}
}

// strict asks the provider to enforce the output schema, which only a
// json_schema request sends: with json_object or none it loaded and did
// nothing. It is refused, saying why.
func TestManifestStrictWithoutJSONSchemaIsRefused(t *testing.T) {
	for _, format := range []string{"json_object", "none"} {
		line := loadProblem(t, manifestWith("strict: true\nresponse_format: "+format+"\n"), nil, "strict")
		want := `strict: true asks the provider to enforce the output schema, which only response_format: json_schema sends; with ` + format + ` it would do nothing: remove it, or use json_schema`
		if !strings.HasSuffix(line, want) {
			t.Errorf("%s: got %s\nwant %s", format, line, want)
		}
	}
	if _, _, err := loadOne(t, manifestWith("strict: false\nresponse_format: none\n"), nil); err != nil {
		t.Errorf("strict: false with none: %v", err)
	}
}
