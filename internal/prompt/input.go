package prompt

import (
	"encoding/json"

	"github.com/routerhq/router/internal/contract"
)

// ValidateInput checks a job's input: it must be a JSON object and, when the
// manifest has an input_schema, match it. It returns nil or an *InputError listing
// every problem with its path (rules "json.syntax", "input.type" or
// "schema.<keyword>").
func (p *Prompt) ValidateInput(input json.RawMessage) error {
	_, err := p.ParseInput(input)
	return err
}

// ParseInput is ValidateInput that also returns the input as decoded
// (contract.ParseJSON: numbers as json.Number), for a caller that needs it
// again (the fingerprint: store.FingerprintValue; the render: RenderParsed)
// without decoding twice.
func (p *Prompt) ParseInput(input json.RawMessage) (map[string]any, error) {
	v, err := contract.ParseJSON(input)
	if err != nil {
		return nil, &InputError{Prompt: p.ID(), Violations: []contract.Violation{{Rule: "json.syntax", Path: "$", Message: err.Error()}}}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &InputError{Prompt: p.ID(), Violations: []contract.Violation{{Rule: "input.type", Path: "$", Message: "input must be a JSON object, got " + jsonType(v)}}}
	}
	if p.input != nil {
		if vs := p.input.Check(v); len(vs) > 0 {
			return nil, &InputError{Prompt: p.ID(), Violations: vs}
		}
	}
	return m, nil
}
