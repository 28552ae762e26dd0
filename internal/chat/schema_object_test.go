package chat

import (
	"errors"
	"strings"
	"testing"
)

// response_format.json_schema.schema must be a JSON object: OpenAI's API
// types it as one ("expected an object, but got a boolean instead"), and the
// Anthropic adapter stops the job ("Schema is not a JSON object",
// KindMisconfigured, ActionStop). true and false are valid JSON Schemas, so
// the validator compiled them and Normalize stored a job no target can run.
// A tool's parameters get exactly this check (checkToolShapes). Found by
// review.
func TestNormalizeRefusesSchemaThatIsNotAnObject(t *testing.T) {
	for _, c := range []struct{ schema, says string }{
		{`true`, "it is the boolean schema true"},
		{` false `, "it is the boolean schema false"},
		{`null`, "it is null"},
		{`[]`, "it is a JSON array"},
		{`"object"`, "it is a JSON string"},
		{`1`, "it is a JSON number"},
	} {
		body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":` + c.schema + `}}}`
		_, err := parse(t, body).Normalize()
		var re *RequestError
		if !errors.As(err, &re) || re.Param != "response_format.json_schema.schema" || !strings.Contains(re.Message, c.says) {
			t.Errorf("schema %s: Normalize = %v; want a 400 on response_format.json_schema.schema saying %q", c.schema, err, c.says)
		}
	}
}
