package providers

import (
	"encoding/json"
	"errors"
	"math"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// looseUsage is an OpenAI-compatible usage object whose counts may be
// written as any JSON number: 10.0, or 1e30, which go-openai's int fields
// refuse. A provider's odd count must not throw away a valid, billed answer
// (the answer's decoding failed, and the call became malformed_response or
// stream_malformed); the counts are clamped as reportedUsage clamps them.
type looseUsage struct {
	PromptTokens        float64 `json:"prompt_tokens"`
	CompletionTokens    float64 `json:"completion_tokens"`
	TotalTokens         float64 `json:"total_tokens"`
	PromptTokensDetails *struct {
		AudioTokens  float64 `json:"audio_tokens"`
		CachedTokens float64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		AudioTokens              float64 `json:"audio_tokens"`
		ReasoningTokens          float64 `json:"reasoning_tokens"`
		AcceptedPredictionTokens float64 `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens float64 `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

// usage is u in go-openai's form, each count clamped to [0,
// maxReportedTokens] (a fraction is dropped).
func (u *looseUsage) usage() openai.Usage {
	out := openai.Usage{
		PromptTokens:     looseCount(u.PromptTokens),
		CompletionTokens: looseCount(u.CompletionTokens),
		TotalTokens:      looseCount(u.TotalTokens),
	}
	if d := u.PromptTokensDetails; d != nil {
		out.PromptTokensDetails = &openai.PromptTokensDetails{
			AudioTokens: looseCount(d.AudioTokens), CachedTokens: looseCount(d.CachedTokens),
		}
	}
	if d := u.CompletionTokensDetails; d != nil {
		out.CompletionTokensDetails = &openai.CompletionTokensDetails{
			AudioTokens: looseCount(d.AudioTokens), ReasoningTokens: looseCount(d.ReasoningTokens),
			AcceptedPredictionTokens: looseCount(d.AcceptedPredictionTokens), RejectedPredictionTokens: looseCount(d.RejectedPredictionTokens),
		}
	}
	return out
}

// looseCount is a count written as a JSON number, clamped as clampTokens
// clamps one.
func looseCount(f float64) int {
	if math.IsNaN(f) || f <= 0 {
		return 0
	}
	return clampTokens(int64(min(math.Trunc(f), maxReportedTokens)))
}

// usageTypeError reports a decoding error on a usage count (a float, or a
// number past int64, in a field go-openai decodes as an int): the rest of
// the answer may be whole.
func usageTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te) && (te.Field == "usage" || strings.HasPrefix(te.Field, "usage."))
}

// lenientCompletion decodes body, a non-streamed answer whose usage
// go-openai could not decode (usageTypeError), with its usage read as
// looseUsage. ok is false when it still does not decode.
func lenientCompletion(body []byte) (resp openai.ChatCompletionResponse, ok bool) {
	var v struct {
		openai.ChatCompletionResponse
		Usage looseUsage `json:"usage"`
	}
	if len(body) == 0 || json.Unmarshal(body, &v) != nil {
		return resp, false
	}
	resp = v.ChatCompletionResponse
	resp.Usage = v.Usage.usage()
	return resp, true
}

// decodeStreamChunk is decodeChunk, with a chunk that does not decode as
// go-openai's because of its usage (usageTypeError) or of a delta's content
// in parts (contentPartsTypeError) decoded again, with its usage read as
// looseUsage and its deltas' content as streamedContent: the last chunk of
// a stream (include_usage) must not make a whole answer a malformed stream,
// nor must Magistral's content. Either may be the error encoding/json
// reports, which is only the first, so the second decode takes both. A
// chunk that decodes costs nothing more.
func decodeStreamChunk(raw []byte, into *openai.ChatCompletionStreamResponse) error {
	err := decodeChunk(raw, into)
	if err == nil || !usageTypeError(err) && !contentPartsTypeError(err) {
		return err
	}
	var v struct {
		openai.ChatCompletionStreamResponse
		Choices []looseStreamChoice `json:"choices"`
		Usage   *looseUsage         `json:"usage"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return err
	}
	choices := make([]openai.ChatCompletionStreamChoice, len(v.Choices))
	for i := range v.Choices {
		var ok bool
		if choices[i], ok = v.Choices[i].choice(); !ok {
			return err
		}
	}
	*into = v.ChatCompletionStreamResponse
	into.Choices = choices
	into.Usage = nil
	if v.Usage != nil {
		u := v.Usage.usage()
		into.Usage = &u
	}
	return nil
}
