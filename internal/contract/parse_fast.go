// This file holds parseJSONFast, ParseJSON's path through goccy/go-json, which
// gives up wherever goccy could differ from encoding/json.

package contract

import (
	"encoding/json"
	"strings"

	gojson "github.com/goccy/go-json"

	"github.com/routerhq/router/internal/jsonfast"
)

// parseJSONFast decodes b as parseJSONStd does, with goccy/go-json; ok is
// false when it did not, and then parseJSONStd must decode b.
//
// Why: ParseJSON runs twice per job, on the caller's input and on the model's
// output, and was about 2.3% of the router's CPU. For a job input of 117 bytes
// encoding/json takes about 3.0 µs and 18 allocations, goccy about 1.1 µs and
// 12; for a model output of 172 bytes 4.0 µs and 30 against 1.5 µs and 22
// (BenchmarkParseJSON, best runs on a busy 2-core VM; 2.5-3x in every run):
// some 7 µs per job become under 3.
//
// goccy decodes with UnmarshalWithOption and useNumber: numbers as json.Number
// with the text they were written with, as encoding/json's Decoder with
// UseNumber gives them. Unmarshal decodes b whole, with no reader and no stream
// buffer, where goccy's Decoder (which has UseNumber) is only about 1.2x faster
// than encoding/json; like ParseJSON it rejects anything after the value but
// JSON whitespace. Its strings are copies (no DecodeNoCopyString, which would
// tie them to the caller's bytes): the value refers neither to b nor to
// goccy's pooled buffers.
//
// Errors are encoding/json's: whenever goccy fails (invalid or truncated JSON,
// data after the value, empty input, nesting deeper than 10000 levels; a panic
// inside goccy counts as failing, see jsonfast.Unmarshal), ok is
// false and ParseJSON decodes b again with encoding/json, whose error it
// describes as before; an invalid output pays goccy's attempt on top.
//
// Guards: none is needed for the value. FuzzParseJSONMatchesEncodingJSON, with
// duplicate and case-folded keys, invalid UTF-8, lone and paired surrogates,
// numbers of every form, nesting at and past the limit, trailing bytes and
// generated documents, found no input where goccy succeeds with another value
// than encoding/json's, or succeeds where encoding/json fails. The one guard
// is goccyUseNumber: should this goccy not decode numbers as json.Number with
// useNumber, every input goes to encoding/json.
func parseJSONFast(b []byte) (v any, ok bool) {
	if !goccyUseNumber {
		return nil, false
	}
	if !jsonfast.Unmarshal(b, &v, useNumber...) {
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
// json.Number("1") with it. Else ParseJSON keeps to encoding/json.
var goccyUseNumber = func() bool {
	var v any
	err := gojson.UnmarshalWithOption([]byte("1"), &v, useNumber...)
	return err == nil && v == json.Number("1")
}()
