package race

import (
	"strconv"

	"github.com/routerhq/router/internal/jsonenc"
)

// appendDecisions appends ds as json.Marshal writes it, byte for byte
// (TestDecisionsJSONIsMarshal), without reflection: every job records its
// routing decisions, and encoding/json's reflection over them was about 1% of
// the router's CPU.
func appendDecisions(b []byte, ds []Decision) []byte {
	if ds == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range ds {
		d := &ds[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"provider":`...)
		b = jsonenc.AppendString(b, d.Provider)
		if d.Event != "" {
			b = append(b, `,"event":`...)
			b = jsonenc.AppendString(b, d.Event)
		}
		b = append(b, `,"eligible":`...)
		b = strconv.AppendBool(b, d.Eligible)
		if d.Reason != "" {
			b = append(b, `,"reason":`...)
			b = jsonenc.AppendString(b, d.Reason)
		}
		if d.Cause != "" {
			b = append(b, `,"cause":`...)
			b = jsonenc.AppendString(b, d.Cause)
		}
		if d.PromptTokens != 0 {
			b = append(b, `,"prompt_tokens":`...)
			b = strconv.AppendInt(b, int64(d.PromptTokens), 10)
		}
		if d.Encoding != "" {
			b = append(b, `,"encoding":`...)
			b = jsonenc.AppendString(b, d.Encoding)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}
