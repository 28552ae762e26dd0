package providers

import (
	"context"
	"net/http"
	"testing"
)

// vLLM's validation 400s repeat the whole request body in pydantic's
// 'input', and the adapter adds stream_options to every streamed call: any
// message that mentioned stream_options was taken as a refusal of it, so a
// caller's own bad request on a streamed call became misconfigured (the
// router's, failed over, counted against the breaker: one tenant's bad
// requests opened it for all) and the operator was told to set stream:
// false. An echoed body does not name the field refused. Found by review.
func TestEchoedStreamOptionsIsNotARefusalOfIt(t *testing.T) {
	for _, body := range []string{
		`{"object":"error","message":"[{'type': 'value_error', 'loc': ('body',), 'msg': 'Value error, when using ` + "`top_logprobs`" + `, ` + "`logprobs`" + ` must be set to true', 'input': {'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}], 'stream': True, 'stream_options': {'include_usage': True}, 'top_logprobs': 3}}]","type":"BadRequestError","param":null,"code":400}`,
		// The same in JSON (FastAPI's detail), and in pydantic's own text.
		`{"object":"error","message":"[{\"type\": \"value_error\", \"loc\": [\"body\"], \"msg\": \"Value error, bad top_logprobs\", \"input\": {\"model\": \"m\", \"stream\": true, \"stream_options\": {\"include_usage\": true}}}]","type":"BadRequestError","param":null,"code":400}`,
		apiErrorBody("1 validation error for ChatCompletionRequest\n  Value error, bad top_logprobs [type=value_error, input_value={'model': 'm', 'stream': True, 'stream_options': {'include_usage': True}}, input_type=dict]", "BadRequestError", nil, 400),
		// An echo that is not under 'input': the name is a key of an object.
		apiErrorBody(`invalid request {"model":"m","stream":true,"stream_options":{"include_usage":true},"top_logprobs":3}: top_logprobs needs logprobs`, "invalid_request_error", nil, nil),
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { writeError(w, 400, nil, body) })
		p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true })
		_, err := p.Complete(context.Background(), testRequest())
		e := mustError(t, err)
		if e.Kind != KindBadRequest {
			t.Errorf("got %s/%s/%s (%s); want bad_request: the caller's request, its body merely echoed", e.Kind, e.Fault, e.Action, e.Message)
		}
	}
}

// The forms in which servers name stream_options as the field they refuse
// are still the router's misconfiguration, an echoed input beside them
// or not.
func TestStreamOptionsRefusalForms(t *testing.T) {
	for _, m := range []string{
		"Extra inputs are not permitted, field: 'stream_options'",
		"[{'type': 'extra_forbidden', 'loc': ('body', 'stream_options'), 'msg': 'Extra inputs are not permitted', 'input': {'include_usage': True}}]",
		`[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted","input":{"include_usage":true}}]`,
		"Unrecognized request argument supplied: stream_options",
		"litellm.UnsupportedParamsError: openai does not support parameters: ['stream_options'], for model=m",
		`Invalid JSON payload received. Unknown name "stream_options": Cannot find field.`,
		"1 validation error for ChatCompletionRequest\nstream_options\n  Extra inputs are not permitted [type=extra_forbidden, input_value={'include_usage': True}, input_type=dict]",
		"stream_options: Extra inputs are not permitted",
		`json: unknown field "stream_options"`,
	} {
		if k := requestKind("", "", m); k != KindMisconfigured {
			t.Errorf("%q: %s, want misconfigured (a refusal of stream_options)", m, k)
		}
	}
	for _, m := range []string{
		"[{'type': 'value_error', 'input': {'stream_options': {'include_usage': True}, 'x': '}'}}]",
		"[{'type': 'value_error', 'input': {'stream_options': {'include_usage': True}, 'content': \"it's ) ]\"}}, {'type': 'missing', 'input': 'stream_options'}]",
		"bad request: 'input': {'stream_options': {'include_usage'", // cut short
		// The caller's own words about stream_options, echoed.
		"[{'type': 'value_error', 'input': {'messages': [{'role': 'user', 'content': 'what does stream_options do?'}], 'stream_options': {'include_usage': True}}}]",
		"[{'type': 'value_error', 'input': 'stream_options \\", // cut short after a backslash
		"[{'type': 'value_error', 'input': {'a': ['stream_options \\",
	} {
		if k := requestKind("", "", m); k != KindBadRequest {
			t.Errorf("%q: %s, want bad_request (stream_options only echoed)", m, k)
		}
	}
}
