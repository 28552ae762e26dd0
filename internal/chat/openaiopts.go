package chat

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	rfcproblem "github.com/routerhq/router/internal/problem"
)

// serviceTiers are the values of OpenAI's service_tier.
var serviceTiers = []string{"auto", "default", "flex", "scale", "priority"}

// The longest safety_identifier and prompt_cache_key, in characters:
// OpenAI's documented maximums (openai-go's ChatCompletionNewParams), past
// which it refuses the request ("string too long"). safety_identifier's was
// raised from 64 to 128, which a SHA-512 hex digest of a user's email needs.
const (
	maxSafetyIdentifier = 128
	maxPromptCacheKey   = 64
)

// openAIOptions checks the request's service_tier, safety_identifier and
// prompt_cache_key and sets them on in.
//
// They say nothing of the answer's text, but each is part of the intent
// (its fingerprint) all the same: the stored intent is what every attempt
// of the job sends, so a resend that changes one under the same
// Idempotency-Key would replay an answer served on another tier, or
// recorded under another user, than the caller now asks for — a 409, as any
// other change is. "auto" is OpenAI's own default ("If not set, the default
// behavior is 'auto'"): it is stored as none, so that it and no
// service_tier are one intent, and an intent stored before the router read
// service_tier (when an "auto" was ignored) keeps its fingerprint. An empty
// safety_identifier or prompt_cache_key is none, as an empty user is.
func (r *Request) openAIOptions(in *Input) error {
	if t := r.ServiceTier; t != nil {
		if !slices.Contains(serviceTiers, *t) {
			return &RequestError{Param: "service_tier", Message: fmt.Sprintf(
				"service_tier %q is not one of %s; leave it out for the provider's default (auto)",
				rfcproblem.Clip(*t), strings.Join(serviceTiers, ", "))}
		}
		if *t != "auto" {
			in.ServiceTier = *t
		}
	}
	for _, o := range []struct {
		param string
		v     *string
		to    *string
		limit int
		what  string
	}{
		{"safety_identifier", r.SafetyIdentifier, &in.SafetyIdentifier, maxSafetyIdentifier, "a stable id of your end user (a hash of their username or email)"},
		{"prompt_cache_key", r.PromptCacheKey, &in.PromptCacheKey, maxPromptCacheKey, "a key shared by requests with a common prompt prefix"},
	} {
		if o.v == nil || *o.v == "" {
			continue
		}
		if err := openAIID(o.param, *o.v, o.limit, o.what); err != nil {
			return err
		}
		*o.to = *o.v
	}
	return nil
}

// openAIID checks v, the value of an identifier param: at most limit
// characters, none of them a control or other unprintable character.
func openAIID(param, v string, limit int, what string) error {
	if n := utf8.RuneCountInString(v); n > limit {
		return &RequestError{Param: param, Message: fmt.Sprintf(
			"%s is %d characters long; at most %d are allowed: send %s of up to %d characters, or leave it out",
			param, n, limit, what, limit)}
	}
	for i, c := range v {
		if c == utf8.RuneError || !unicode.IsPrint(c) {
			return &RequestError{Param: param, Message: fmt.Sprintf(
				"%s holds an unprintable character (%U at byte %d): send %s made of printable characters, or leave it out",
				param, c, i, what)}
		}
	}
	return nil
}
