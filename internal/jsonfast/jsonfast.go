// Package jsonfast owns the router's use of github.com/goccy/go-json: a first,
// faster attempt at decoding JSON on the hot path, whose caller decodes with
// encoding/json whenever the attempt fails (and for every error, so values
// and errors stay encoding/json's; see the callers' differential fuzz tests:
// internal/providers' decodeChunk, internal/contract's ParseJSON).
//
// An attempt never takes the process down: a panic inside goccy (input it
// did not expect, from a provider or a caller) is a failed attempt, like an
// error. It imports nothing of the router's.
package jsonfast

import gojson "github.com/goccy/go-json"

// Unmarshal decodes b into v with goccy/go-json and options, and reports
// whether it did. On false, v may hold part of a value: the caller resets it
// and decodes b with encoding/json.
func Unmarshal(b []byte, v any, options ...gojson.DecodeOptionFunc) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return gojson.UnmarshalWithOption(b, v, options...) == nil
}
