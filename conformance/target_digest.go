package conformance

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// targetDigestForm names the canonical form hashed by TargetDigest; change it
// whenever that form changes, so that no two forms share a digest.
// requestMaxTokens, a string where the form has always had a number, did
// not need a new name: no digest of before can hold it.
const targetDigestForm = "target-digest/1"

// requestMaxTokens stands in TargetDigest for an Anthropic provider's
// max_tokens when requests set their own, so the provider's is never sent.
const requestMaxTokens = "the request's own"

// TargetDigest is the SHA-256 (hex) of what of a target's configuration
// decides the answers it gives to a request: its provider's type and base URL
// (the endpoint), the model, and the request settings the adapter applies
// to every request — stream (the streaming or the plain API), supports_lookup
// (store and metadata in the body), an Anthropic provider's max_tokens (sent
// when a request sets none: ownMaxTokens false) and a scripted provider's
// script. For requests that set their own max_tokens (ownMaxTokens: every
// prompt's, whose manifest requires one) the provider's is never sent, so
// the digest holds a fixed marker in its place: raising it for chat
// completions withdraws no pass of such a prompt. A conformance
// run records it, and the gate counts a pass only for the settings it was
// recorded against: a target's id and model stay when its provider is
// repointed (openai-backup moved from api.openai.com to a self-hosted server
// serving a model of the same name), and the old endpoint's pass says nothing
// of the new one.
//
// Left out, because they do not change an answer: the API key (and its
// variable; credentials in the base URL too), the deadlines, retries, the
// breaker, the connection pool, max_response_bytes (it refuses an answer,
// it does not change one) and the price. The context window and tokenizer are
// left out as well: routing checks every job against them, whatever a run
// found. The base URL is compared as the adapters use it: scheme and host in
// lower case, without a default port or a trailing slash, and Anthropic's
// default when a provider of that type names none.
//
// model "" is the provider's own model. The configuration must have its
// defaults (config.Load gives them). With ownMaxTokens false the digest is
// the one every run recorded before the marker (SameTarget still counts
// those for prompts that set their own max_tokens).
func TargetDigest(p *config.Provider, model string, ownMaxTokens bool) string {
	type step struct {
		Output string `json:"output"`
		Status int    `json:"status"`
		Hang   bool   `json:"hang"`
		Model  string `json:"model"`
	}
	canon := struct {
		Form           string `json:"form"`
		Type           string `json:"type"`
		BaseURL        string `json:"base_url"`
		Model          string `json:"model"`
		Stream         bool   `json:"stream"`
		SupportsLookup bool   `json:"supports_lookup"`
		MaxTokens      any    `json:"max_tokens"` // an Anthropic provider's (a number), or requestMaxTokens; 0 for other types
		Script         []step `json:"script,omitempty"`
	}{
		Form: targetDigestForm, Type: p.Type, BaseURL: canonicalBaseURL(p.Type, p.BaseURL), Model: cmp.Or(model, p.Model),
		// Unset, as config.WithDefaults sets it: the hosted APIs stream.
		Stream:         p.Stream == nil && (p.Type == "openai" || p.Type == "anthropic") || p.Stream != nil && *p.Stream,
		SupportsLookup: p.SupportsLookup,
		MaxTokens:      0, // a number, as it has always been written (a nil any is null)
	}
	switch {
	case p.Type == "anthropic" && ownMaxTokens:
		canon.MaxTokens = requestMaxTokens
	case p.Type == "anthropic":
		canon.MaxTokens = cmp.Or(p.MaxTokens, providers.AnthropicDefaultMaxTokens)
	case p.Type == "scripted":
		// A step's latency changes when the answer comes, not what it is.
		for _, s := range p.Script {
			canon.Script = append(canon.Script, step{Output: s.Output, Status: s.Status, Hang: s.Hang, Model: s.Model})
		}
	}
	b, err := json.Marshal(canon)
	if err != nil { // strings, numbers and booleans: cannot happen
		b = fmt.Appendf(nil, "%s %v", targetDigestForm, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TargetDigests is TargetDigest for each target of cfg (config.AllTargets), by
// its id, the model a request asks it for ("": the target's own) and whether
// the requests judged set their own max_tokens (a prompt's: p.MaxTokens > 0):
// what `router conformance run` (Options.TargetDigests) records, and what
// the gate (TargetSettings) and the operator views compare (SameTarget). ""
// for a target cfg does not have: nothing is compared then, as for a run
// recorded without a digest.
func TargetDigests(cfg *config.Config) func(target, model string, ownMaxTokens bool) string {
	type target struct {
		provider *config.Provider
		model    string
	}
	byID := map[string]target{}
	for _, t := range cfg.AllTargets() {
		byID[t.ID] = target{t.Provider, t.Model}
	}
	return func(id, model string, ownMaxTokens bool) string {
		t, ok := byID[id]
		if !ok {
			return ""
		}
		return TargetDigest(t.provider, cmp.Or(model, t.model), ownMaxTokens)
	}
}

// SameTarget reports whether a run recorded against the target digest ran
// counts for target's settings of now, asked for model by the requests of
// prompt p (nil: a prompt not loaded, whose requests may set max_tokens or
// not: either form counts). digestOf is TargetDigests' (nil: runs on any
// settings count). It counts when ran is the digest of now for p's requests,
// or either is unknown (store.SameTarget); and, when p's requests set their
// own max_tokens, also when ran is the digest of now in the form without the
// marker (TargetDigest with ownMaxTokens false): the form every run recorded
// before the marker, so an upgrade withdraws no pass. That form holds an
// Anthropic provider's max_tokens, so such a run stops counting once that
// changes, until it is run again.
func SameTarget(digestOf func(target, model string, ownMaxTokens bool) string, ran, target, model string, p *prompt.Prompt) bool {
	if digestOf == nil || ran == "" {
		return true
	}
	own := p == nil || p.MaxTokens > 0
	if store.SameTarget(ran, digestOf(target, model, own)) {
		return true
	}
	return own && ran == digestOf(target, model, false)
}

// canonicalBaseURL is the endpoint of a provider of type typ written raw, in
// one form for every way of writing it (TargetDigest).
func canonicalBaseURL(typ, raw string) string {
	if typ == "scripted" {
		return "" // a scripted provider calls nothing
	}
	raw = strings.TrimSpace(raw)
	if raw == "" && typ == "anthropic" {
		raw = providers.AnthropicBaseURL
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw // the configuration refuses it at load
	}
	u.User = nil // credentials, not the endpoint
	u.Fragment, u.RawFragment = "", ""
	u.Scheme = strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if u.Scheme == "https" && port == "443" || u.Scheme == "http" && port == "80" {
		port = ""
	}
	switch {
	case port != "":
		u.Host = net.JoinHostPort(host, port)
	case strings.Contains(host, ":"):
		u.Host = "[" + host + "]"
	default:
		u.Host = host
	}
	// The adapters trim trailing slashes before adding their paths.
	u.Path, u.RawPath = strings.TrimRight(u.Path, "/"), strings.TrimRight(u.RawPath, "/")
	return u.String()
}
