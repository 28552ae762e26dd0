package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
)

// Fingerprint is the SHA-256 of the canonical form of the fields that define an
// intent (SPEC §2): operation, the prompt version and route as the caller asked
// for them, and the input. Canonical form: JSON with object keys sorted and no
// insignificant whitespace; numbers keep their written form.
func Fingerprint(operation, promptVersion, route string, input json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("input is not valid JSON: %w", err)
	}
	return FingerprintValue(operation, promptVersion, route, v)
}

// FingerprintValue is Fingerprint of an input already decoded with
// json.Decoder.UseNumber (as contract.ParseJSON decodes), which keeps each
// number's written form.
func FingerprintValue(operation, promptVersion, route string, input any) ([]byte, error) {
	canon, err := json.Marshal(map[string]any{ // encoding/json sorts map keys
		"operation": operation, "prompt_version": promptVersion, "route": route, "input": input,
	})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canon)
	return sum[:], nil
}
