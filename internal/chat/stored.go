package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/routerhq/router/internal/jsonfast"
)

// The stored form of an intent. A job's input is stored in PostgreSQL's
// jsonb, which gives an object's members back in its own order (shorter
// names first, then bytewise) and re-spells numbers: a later run of a chat
// job (POST /v1/jobs/{id}/retry, an adoption by another replica, a resume
// after a restart) read the caller's schemas that way, and OpenAI's
// structured outputs write an answer's keys in its schema's order. So the
// caller's JSON that the router passes on as written — tools, tool_choice
// when it is an object, response_format.json_schema.schema,
// chat_template_kwargs and each assistant message's tool_calls — is stored
// as a JSON string holding its compact text, whose bytes jsonb keeps: every
// round sends the bytes the first one sent.
//
// Input's own JSON (json.Marshal) stays the object form. It is the intent the
// job's fingerprint hashes (IntentValue gives it from the stored form, so an
// Idempotency-Key's intent is the one replicas before the stored form
// computed), and it is what a job's input is shown as (ShownInput).
// UnmarshalJSON reads either form: rows stored before hold the object form.

// StoredJSON is in as a job's input stores it: its JSON with the members
// above held as strings.
func (in *Input) StoredJSON() ([]byte, error) {
	st := *in
	var err error
	if st.Tools, err = storedText(in.Tools); err != nil {
		return nil, err
	}
	if st.ToolChoice, err = storedText(in.ToolChoice); err != nil {
		return nil, err
	}
	if st.ChatTemplateKwargs, err = storedText(in.ChatTemplateKwargs); err != nil {
		return nil, err
	}
	if rf := in.ResponseFormat; rf != nil && rf.JSONSchema != nil && len(rf.JSONSchema.Schema) > 0 {
		f, js := *rf, *rf.JSONSchema
		if js.Schema, err = storedText(js.Schema); err != nil {
			return nil, err
		}
		f.JSONSchema = &js
		st.ResponseFormat = &f
	}
	cloned := false
	for i := range in.Messages {
		if len(in.Messages[i].ToolCalls) == 0 {
			continue
		}
		if !cloned { // in's messages stay as they are
			st.Messages, cloned = slices.Clone(in.Messages), true
		}
		if st.Messages[i].ToolCalls, err = storedText(in.Messages[i].ToolCalls); err != nil {
			return nil, err
		}
	}
	return json.Marshal(&st)
}

// storedText is raw, a JSON object or array, as a JSON string holding its
// compact text as Input's JSON writes it; any other raw (empty, or
// tool_choice's "auto") is kept.
func storedText(raw json.RawMessage) (json.RawMessage, error) {
	if !objectOrArray(raw) {
		return raw, nil
	}
	text, err := json.Marshal(raw) // compacted, as the object form has it
	if err != nil {
		return nil, err
	}
	return json.Marshal(string(text))
}

// objectOrArray reports whether raw, JSON, is an object or an array.
func objectOrArray(raw []byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && (raw[0] == '{' || raw[0] == '[')
}

// fromStored is the JSON a member of the stored form holds: a string holding
// an object's or an array's text is that text; anything else (the object
// form of a row stored before, tool_choice's "auto") is raw itself.
func fromStored(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || raw[0] != '"' {
		return raw
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || !objectOrArray([]byte(s)) || !json.Valid([]byte(s)) {
		return raw
	}
	return json.RawMessage(s)
}

// storedInput is Input without its methods, to decode into.
type storedInput Input

// UnmarshalJSON decodes an intent in either form: the stored form
// (StoredJSON) or the object form (Input's JSON, and rows stored before).
func (in *Input) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*storedInput)(in)); err != nil {
		return err
	}
	in.Tools = fromStored(in.Tools)
	in.ToolChoice = fromStored(in.ToolChoice)
	in.ChatTemplateKwargs = fromStored(in.ChatTemplateKwargs)
	if rf := in.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		rf.JSONSchema.Schema = fromStored(rf.JSONSchema.Schema)
	}
	for i := range in.Messages {
		in.Messages[i].ToolCalls = fromStored(in.Messages[i].ToolCalls)
	}
	return nil
}

// IntentValue is the intent a stored input holds, in the object form, as
// encoding/json's Decoder with UseNumber gives it (store.FingerprintValue's
// input): the value the object form's bytes decode to, whichever form
// stored holds. A job's fingerprint is of it, so that the same request has
// the same fingerprint as in the object form replicas before the stored form
// stored (and computed the fingerprint of).
func IntentValue(stored []byte) (any, error) {
	v, err := decodeValue(stored)
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	if m == nil {
		return v, nil
	}
	for _, name := range []string{"tools", "tool_choice", "chat_template_kwargs"} {
		valueFromStored(m, name)
	}
	if rf, ok := m["response_format"].(map[string]any); ok {
		if js, ok := rf["json_schema"].(map[string]any); ok {
			valueFromStored(js, "schema")
		}
	}
	if msgs, ok := m["messages"].([]any); ok {
		for _, x := range msgs {
			if msg, ok := x.(map[string]any); ok {
				valueFromStored(msg, "tool_calls")
			}
		}
	}
	return v, nil
}

// valueFromStored replaces obj[name], when it is a string holding an
// object's or an array's text, by that text's value (fromStored).
func valueFromStored(obj map[string]any, name string) {
	s, ok := obj[name].(string)
	if !ok || !objectOrArray([]byte(s)) {
		return
	}
	if x, err := decodeValue([]byte(s)); err == nil {
		obj[name] = x
	}
}

// decodeValue decodes b as encoding/json's Decoder with UseNumber does
// (jsonfast.Value first, as store.Fingerprint decodes).
func decodeValue(b []byte) (any, error) {
	if v, ok := jsonfast.Value(b); ok {
		return v, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the intent is not valid JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("the intent is not valid JSON: data after its value")
	}
	return v, nil
}

// ShownInput is a chat job's stored input as a job is shown (GET
// /v1/jobs/{id}, webhooks, `router jobs get`): an input in the stored form
// is written in the object form — Input's JSON, its members in Input's
// order, with the caller's schemas and tools as written — so that readers
// see objects where the stored form holds their text. Any other input (the
// object form of a row stored before) is returned as it is, and so is one
// that does not decode; changed says whether shown is another text.
func ShownInput(stored []byte) (shown []byte, changed bool) {
	if !holdsStoredText(stored) {
		return stored, false
	}
	var in Input
	if json.Unmarshal(stored, &in) != nil {
		return stored, false
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as PostgreSQL writes the rest of a job
	if enc.Encode(&in) != nil {
		return stored, false
	}
	return bytes.TrimRight(b.Bytes(), "\n"), true
}

// storedTextMembers are the names of the members StoredJSON may write as
// strings.
var storedTextMembers = [][]byte{[]byte(`"tools"`), []byte(`"tool_choice"`), []byte(`"chat_template_kwargs"`), []byte(`"schema"`), []byte(`"tool_calls"`)}

// holdsStoredText reports whether b may hold a member in the stored form:
// one of storedTextMembers followed by a string that starts with '{' or
// '['. A false yes (such a member name inside the caller's own object
// form) costs a decoding, nothing else.
func holdsStoredText(b []byte) bool {
	for _, name := range storedTextMembers {
		for rest := b; ; {
			i := bytes.Index(rest, name)
			if i < 0 {
				break
			}
			rest = bytes.TrimLeft(rest[i+len(name):], " \t\r\n")
			if len(rest) == 0 || rest[0] != ':' {
				continue
			}
			rest = bytes.TrimLeft(rest[1:], " \t\r\n")
			if len(rest) > 1 && rest[0] == '"' && (rest[1] == '{' || rest[1] == '[') {
				return true
			}
		}
	}
	return false
}
