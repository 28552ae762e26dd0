package chat

import (
	"bytes"
	"encoding/json"
	"fmt"

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
// chat_template_kwargs and each assistant message's tool_calls — is kept
// beside the object form as the JSON strings of one more member, "verbatim"
// (a string's bytes jsonb keeps): every round sends the bytes the first one
// sent.
//
// The object form is Input's JSON (json.Marshal), as before the verbatim
// texts: a replica of the previous version ignores the member it does not
// know and runs the object form as it always did (a rolling update, a
// roll-back), and the job's fingerprint is of the object form (IntentValue
// drops "verbatim"), so an Idempotency-Key's intent is the one replicas
// before computed. A job is shown without it (ShownInput).

// verbatimMember is the member of a stored input that holds the verbatim
// texts.
const verbatimMember = "verbatim"

// verbatimTexts is what the "verbatim" member holds: each member's compact
// text as the caller wrote it ("": none, or not an object or array), and the
// assistant messages' tool_calls by message index.
type verbatimTexts struct {
	Tools              string         `json:"tools,omitempty"`
	ToolChoice         string         `json:"tool_choice,omitempty"`
	ChatTemplateKwargs string         `json:"chat_template_kwargs,omitempty"`
	Schema             string         `json:"schema,omitempty"`
	ToolCalls          map[int]string `json:"tool_calls,omitempty"`
}

// StoredJSON is in as a job's input stores it: its JSON, with the verbatim
// texts of the members above in a last member "verbatim" (none when it has
// none of them).
func (in *Input) StoredJSON() ([]byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	v := verbatimTexts{Tools: verbatimText(in.Tools), ToolChoice: verbatimText(in.ToolChoice),
		ChatTemplateKwargs: verbatimText(in.ChatTemplateKwargs)}
	if rf := in.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		v.Schema = verbatimText(rf.JSONSchema.Schema)
	}
	for i, m := range in.Messages {
		if t := verbatimText(m.ToolCalls); t != "" {
			if v.ToolCalls == nil {
				v.ToolCalls = map[int]string{}
			}
			v.ToolCalls[i] = t
		}
	}
	if v.Tools == "" && v.ToolChoice == "" && v.ChatTemplateKwargs == "" && v.Schema == "" && v.ToolCalls == nil {
		return b, nil
	}
	extra, err := json.Marshal(&v)
	if err != nil {
		return nil, err
	}
	b = append(b[:len(b)-1], `,"`+verbatimMember+`":`...) // Input's closing brace, written again below
	b = append(b, extra...)
	return append(b, '}'), nil
}

// verbatimText is raw, when it is a JSON object or array, as Input's JSON
// writes it (compacted, in the caller's order, numbers as written); "" for
// anything else (empty, or tool_choice's "auto").
func verbatimText(raw json.RawMessage) string {
	if !objectOrArray(raw) {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return ""
	}
	return b.String()
}

// objectOrArray reports whether raw, JSON, is an object or an array.
func objectOrArray(raw []byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && (raw[0] == '{' || raw[0] == '[')
}

// fromVerbatim is text, when it is the JSON of an object or an array, else
// raw (a row stored before the verbatim texts, a text that does not parse).
func fromVerbatim(raw json.RawMessage, text string) json.RawMessage {
	if text == "" || !objectOrArray([]byte(text)) || !json.Valid([]byte(text)) {
		return raw
	}
	return json.RawMessage(text)
}

// storedInput is Input without its methods, to decode into, with the
// verbatim texts.
type storedInput struct {
	*plainInput
	Verbatim *verbatimTexts `json:"verbatim"`
}

// plainInput is Input without its methods.
type plainInput Input

// UnmarshalJSON decodes a stored intent: its object form, then the verbatim
// texts, when it has them, in place of the members they are of (a row
// stored before them has none: its object form is what it runs).
func (in *Input) UnmarshalJSON(b []byte) error {
	st := storedInput{plainInput: (*plainInput)(in)}
	if err := json.Unmarshal(b, &st); err != nil {
		return err
	}
	v := st.Verbatim
	if v == nil {
		return nil
	}
	in.Tools = fromVerbatim(in.Tools, v.Tools)
	in.ToolChoice = fromVerbatim(in.ToolChoice, v.ToolChoice)
	in.ChatTemplateKwargs = fromVerbatim(in.ChatTemplateKwargs, v.ChatTemplateKwargs)
	if rf := in.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		rf.JSONSchema.Schema = fromVerbatim(rf.JSONSchema.Schema, v.Schema)
	}
	for i, text := range v.ToolCalls {
		if i >= 0 && i < len(in.Messages) {
			in.Messages[i].ToolCalls = fromVerbatim(in.Messages[i].ToolCalls, text)
		}
	}
	return nil
}

// IntentValue is the intent a stored input holds, in the object form, as
// encoding/json's Decoder with UseNumber gives it (store.FingerprintValue's
// input): the stored value without its verbatim texts. A job's fingerprint is
// of it, so that the same request has the fingerprint replicas before the
// verbatim texts computed.
func IntentValue(stored []byte) (any, error) {
	v, err := decodeValue(stored)
	if err != nil {
		return nil, err
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, verbatimMember)
	}
	return v, nil
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
// /v1/jobs/{id}, webhooks, `router jobs get`): an input with verbatim texts
// is written in the object form — Input's JSON, its members in Input's
// order, with the caller's schemas and tools as written — without them. Any
// other input (a row stored before them) is returned as it is, and so is one
// that does not decode; changed says whether shown is another text.
func ShownInput(stored []byte) (shown []byte, changed bool) {
	if !bytes.Contains(stored, []byte(`"`+verbatimMember+`"`)) {
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
