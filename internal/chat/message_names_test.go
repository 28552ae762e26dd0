package chat

import (
	"errors"
	"strings"
	"testing"
)

// OpenAI refuses a message's name holding white space or one of < | \ / >
// (under every pattern it has quoted: ^[a-zA-Z0-9_-]+$, later
// ^[^\s<|\\/>]+$) and a history call's function.name outside
// ^[a-zA-Z0-9_-]+$ ("'messages[9].tool_calls[0].function.name'"): stored,
// each is a job every OpenAI target refuses, binding the key. Normalize
// refuses them, on the scanner's fast path and on the decoding one; a name
// only the older pattern refused ("bot.v2", "Zoë") is accepted. Found by
// review.
func TestNormalizeRefusesMessageNamesOpenAIRefuses(t *testing.T) {
	for _, c := range []struct{ messages, param, says string }{
		{`{"role":"user","content":"hi","name":"Ann Smith"}`, "messages[0].name", `"Ann_Smith"`},
		{`{"role":"system","content":"be brief","name":"bot/v2"},{"role":"user","content":"hi"}`, "messages[0].name", `"bot_v2"`},
		{`{"role":"user","content":"hi","name":"<Zoë>"}`, "messages[0].name", `"Zoë"`},
		{`{"role":"user","content":"Paris?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get weather","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":"sunny"}`, "messages[1].tool_calls[0].function.name", `"get_weather"`},
		// escaped: left by the scanner to decoding, which refuses it too
		{`{"role":"user","content":"Paris?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"weather\u0020now","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":"sunny"}`, "messages[1].tool_calls[0].function.name", `"weather_now"`},
	} {
		_, err := parse(t, `{"model":"m","tools":[{"type":"function","function":{"name":"weather"}}],"messages":[`+c.messages+`]}`).Normalize()
		var re *RequestError
		if !errors.As(err, &re) || re.Param != c.param || !strings.Contains(re.Message, c.says) {
			t.Errorf("%s: Normalize = %v; want a 400 on %s suggesting %s", c.messages, err, c.param, c.says)
		}
	}
	// OpenAI's pattern has no length: a long name is left to it.
	long := strings.Repeat("a", 100)
	ok := `{"role":"user","content":"Paris?","name":"Ann_Smith-2"},{"role":"user","content":"and Rome?","name":"` + long + `"},` +
		`{"role":"user","content":"and Oslo?","name":"bot.v2"},{"role":"user","content":"and Nice?","name":"Zoë"},{"role":"user","content":"and Bern?","name":"ann@acme.com"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"weather","arguments":"{}"}},` +
		`{"id":"c2","type":"function","function":{"name":"w\u0065ather","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"sunny"},{"role":"tool","tool_call_id":"c2","content":"rain"}`
	if _, err := parse(t, `{"model":"m","tools":[{"type":"function","function":{"name":"weather"}}],"messages":[`+ok+`]}`).Normalize(); err != nil {
		t.Errorf("valid names refused: %v", err)
	}
}
