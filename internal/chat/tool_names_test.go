package chat

import (
	"errors"
	"strings"
	"testing"
)

// OpenAI refuses a function name outside ^[a-zA-Z0-9_-]{1,64}$ ("Invalid
// 'tools[0].function.name': string does not match pattern"), Anthropic a tool
// name outside ^[a-zA-Z0-9_-]{1,128}$ and two tools of one name ("Tool names
// must be unique"). Normalize refuses both, as it refuses such a json_schema
// name, suggesting a name. Found by review: the tools were stored, and with
// duplicates the contract kept only the last tool's strict parameters.
func TestNormalizeRefusesToolNamesProvidersRefuse(t *testing.T) {
	for _, c := range []struct{ tools, param, says string }{
		{`[{"type":"function","function":{"name":"get weather"}}]`, "tools[0].function.name", `"get_weather"`},
		{`[{"type":"function","function":{"name":"weather"}},{"type":"function","function":{"name":"weather.get"}}]`, "tools[1].function.name", `"weather_get"`},
		{`[{"type":"function","function":{"name":"` + strings.Repeat("a", 141) + `"}}]`, "tools[0].function.name", "1 to 64"},
		{`[{"type":"function","function":{"name":"` + strings.Repeat("a", 65) + `"}}]`, "tools[0].function.name", "1 to 64"},
		{`[{"type":"function","function":{"name":"weather"}},{"type":"function","function":{"name":"weather"}}]`, "tools[1].function.name", "tools[0]"},
		{`[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b"}},{"type":"function","function":{"name":"a","strict":true,"parameters":{"type":"object"}}}]`,
			"tools[2].function.name", "tools[0]"},
	} {
		_, err := parse(t, `{"model":"m","tools":`+c.tools+`,"messages":[{"role":"user","content":"hi"}]}`).Normalize()
		var re *RequestError
		if !errors.As(err, &re) || re.Param != c.param || !strings.Contains(re.Message, c.says) {
			t.Errorf("tools %s: Normalize = %v; want a 400 on %s saying %s", c.tools, err, c.param, c.says)
		}
	}
	// The rule's edges are accepted.
	ok := `[{"type":"function","function":{"name":"` + strings.Repeat("a", 64) + `"}},{"type":"function","function":{"name":"get_weather-2"}},` +
		`{"type":"function","function":{"name":"Weather"}},{"type":"function","function":{"name":"weather"}}]`
	if _, err := parse(t, `{"model":"m","tools":`+ok+`,"messages":[{"role":"user","content":"hi"}]}`).Normalize(); err != nil {
		t.Errorf("tools %s: %v", ok, err)
	}
}
