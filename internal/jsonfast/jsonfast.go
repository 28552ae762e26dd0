// Package jsonfast owns the router's use of github.com/goccy/go-json: a first,
// faster attempt at decoding JSON on the hot path, whose caller decodes with
// encoding/json whenever the attempt fails (and for every error, so values
// and errors stay encoding/json's; see the callers' differential fuzz tests:
// internal/providers' decodeChunk, internal/contract's ParseJSON, which
// store.Fingerprint's decoding shares through Value).
//
// An attempt never takes the process down: a panic inside goccy (input it
// did not expect, from a provider or a caller) is a failed attempt, like an
// error. It imports nothing of the router's.
package jsonfast

import (
	"encoding/json"
	"strings"

	gojson "github.com/goccy/go-json"
)

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

// Value decodes b, exactly one JSON value with nothing after it but JSON
// whitespace, into an any as encoding/json's Decoder with UseNumber does:
// objects as map[string]any, arrays as []any, numbers as json.Number with the
// text they were written with; strings are copies (the value refers neither
// to b nor to goccy's pooled buffers). ok is false when goccy did not decode b
// (invalid, truncated, trailing data, nesting deeper than 10000 levels, a
// panic), or when this goccy does not decode numbers as json.Number
// (goccyUseNumber): the caller then decodes b with encoding/json, whose
// errors it reports. contract's FuzzParseJSONMatchesEncodingJSON checks the
// values are encoding/json's.
//
// It is goccy's Unmarshal with its UseNumber flag: b whole, with no reader
// and no stream buffer, where goccy's Decoder (which has UseNumber) is only
// about 1.2x faster than encoding/json.
func Value(b []byte) (v any, ok bool) {
	if !goccyUseNumber {
		return nil, false
	}
	if !Unmarshal(b, &v, useNumber...) {
		return nil, false
	}
	return v, true
}

// useNumber is the option of goccy's Unmarshal which decodes a number into an
// any as a json.Number, as its Decoder's UseNumber does. goccy exports no such
// option, so its flag is read from a Decoder after UseNumber (numberOption).
var useNumber = []gojson.DecodeOptionFunc{func(o *gojson.DecodeOption) { o.Flags |= numberOption.Flags }}

// numberOption has the flag which UseNumber sets on a goccy Decoder, and no other.
var numberOption = func() (opt gojson.DecodeOption) {
	flags := func(useNumber bool) (got gojson.DecodeOption) {
		d := gojson.NewDecoder(strings.NewReader("0"))
		if useNumber {
			d.UseNumber()
		}
		var v any
		_ = d.DecodeWithOption(&v, func(o *gojson.DecodeOption) { got.Flags = o.Flags })
		return got
	}
	opt.Flags = flags(true).Flags &^ flags(false).Flags
	return opt
}()

// goccyUseNumber reports whether useNumber works: goccy decodes 1 as
// json.Number("1") with it. Else Value always reports false.
var goccyUseNumber = func() bool {
	var v any
	err := gojson.UnmarshalWithOption([]byte("1"), &v, useNumber...)
	return err == nil && v == json.Number("1")
}()
