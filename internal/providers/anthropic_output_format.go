package providers

import (
	"bytes"
	"encoding/json"
	"errors"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
)

// anthropicOutputFormat is the output_config.format for a json_schema
// response format, with schema sent as it is: the SDK's Schema field is a
// map[string]any, whose re-encoding would round numbers beyond 2^53 and
// sort properties alphabetically (a model under structured output writes
// keys in schema order), so Anthropic would be held to another schema than
// the router validates with and OpenAI-compatible targets receive. The
// override is marshalled from the bytes given, with no per-request decoding.
func anthropicOutputFormat(schema []byte) (anthropic.JSONOutputFormatParam, error) {
	if s := bytes.TrimLeft(schema, " \t\r\n"); len(s) == 0 || s[0] != '{' {
		return anthropic.JSONOutputFormatParam{}, errors.New("want a JSON object")
	}
	if !json.Valid(schema) {
		return anthropic.JSONOutputFormatParam{}, errors.New("not valid JSON")
	}
	return param.Override[anthropic.JSONOutputFormatParam](anthropicJSONSchemaFormat{Type: "json_schema", Schema: schema}), nil
}

// anthropicJSONSchemaFormat is JSONOutputFormatParam's wire form with the
// schema kept raw.
type anthropicJSONSchemaFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema"`
}
