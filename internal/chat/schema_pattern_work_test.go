package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A response_format schema whose patterns would cost too much to match
// against an answer is refused when the request is checked: 400 with param
// response_format.json_schema.schema, naming the bound and the fix; a strict
// tool's parameters likewise, with param tools[i].function.parameters.
func TestSchemaWhosePatternsCostTooMuchToMatchIsRefusedAtRequestTime(t *testing.T) {
	one := `{"pattern":"^(?s:.{0,1000})(?s:.{0,1000})*$"}`
	schema := `{"type":"object","properties":{"s":{"type":"string","allOf":[` + one + "," + one + `]}}}` // 8,016 instructions
	for param, body := range map[string]string{
		"response_format.json_schema.schema": `{"model":"m","messages":[{"role":"user","content":"Reply in JSON."}],` +
			`"response_format":{"type":"json_schema","json_schema":{"name":"out","schema":` + schema + `}}}`,
		"tools[0].function.parameters": `{"model":"m","messages":[{"role":"user","content":"Look it up."}],` +
			`"tools":[{"type":"function","function":{"name":"lookup","strict":true,"parameters":` + schema + `}}]}`,
	} {
		var req Request
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatal(err)
		}
		_, err := req.NormalizeFor("owner-acme")
		var re *RequestError
		if !errors.As(err, &re) || re.Param != param {
			t.Errorf("%s: Normalize gave %v; want a RequestError with param %s", param, err, param)
			continue
		}
		for _, want := range []string{"too costly to validate against", fmt.Sprintf("more than the %d", contract.MaxSchemaPatternWork),
			"the answer's /s", "use maxLength for a length"} {
			if !strings.Contains(re.Message, want) {
				t.Errorf("%s: %q: want %q in it", param, re.Message, want)
			}
		}
	}
}
