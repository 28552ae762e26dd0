package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/routerhq/router/internal/netredact"
)

// Tokenizers are the encodings the router counts tokens with offline
// (internal/tokens). A name outside them would pass the load and then make
// the provider ineligible for every job ("cannot count tokens"): a typo that
// silently routes all traffic elsewhere.
var Tokenizers = []string{"o200k_base", "cl100k_base", "p50k_base", "r50k_base"}

// providerProblems checks what a provider's adapter would otherwise find
// only on its first call: its base_url and its tokenizer.
func (p Provider) providerProblems(where string) []string {
	var errs []string
	if p.Type != "scripted" && p.BaseURL != "" {
		if err := checkBaseURL(p.BaseURL); err != nil {
			errs = append(errs, fmt.Sprintf("%s.base_url: %v", where, err))
		} else {
			if host, https, ok := plainHTTPToPublicAPI(p.BaseURL); ok {
				errs = append(errs, fmt.Sprintf("%s.base_url: http:// to %s would send the API key in clear with every attempt (and %s answers only over HTTPS): write https://, %q", where, host, host, https))
			}
			errs = append(errs, p.anthropicRootProblems(where)...)
		}
	}
	errs = append(errs, p.scriptProblems(where)...)
	if p.Tokenizer != "" && !slices.Contains(Tokenizers, p.Tokenizer) {
		errs = append(errs, fmt.Sprintf("%s.tokenizer: %q is not one of %s (omit it to choose by the model's name)", where, p.Tokenizer, strings.Join(Tokenizers, ", ")))
	}
	return errs
}

// anthropicRootProblems refuses an anthropic provider's base_url that ends
// in /v1.
func (p Provider) anthropicRootProblems(where string) []string {
	if p.Type != "anthropic" {
		return nil
	}
	root, ok := anthropicVersioned(p.BaseURL)
	if !ok {
		return nil
	}
	if strings.Contains(root, "=…") {
		root += " (with your query's values where it shows …)"
	}
	return []string{fmt.Sprintf("%s.base_url for type anthropic must not end in /v1: the SDK adds /v1/messages itself, so every request would go to /v1/v1/messages and fail as model_not_found; use %s", where, root)}
}

// checkBaseURL wants an absolute http(s) URL with a host: without a scheme
// ("api.openai.com/v1") every attempt would fail, each counted against the
// provider's breaker, instead of the router refusing to start.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may carry a password
		}
		return fmt.Errorf("not a URL: %v", err)
	}
	// The URL is shown without its user information: a key pasted in the
	// user name (https://sk-…@host) would be shown by Redacted.
	user := u.User
	u.User = nil
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http:// or https:// URL with a host (for example https://api.openai.com/v1)", netredact.URL(u))
	}
	if user != nil {
		// Neither user name nor password is repeated: either may be the key.
		return fmt.Errorf("must not carry credentials (user:password@ before the host; not shown here): a URL is written in logs and messages, and is no place for a secret; "+
			"write the base_url without them, %q (query values shown as …), and put the API key in an environment variable named by api_key_env", netredact.URL(u))
	}
	if u.Fragment != "" || strings.HasSuffix(raw, "#") {
		// A fragment is never sent: what follows the # would be lost
		// from every request (the adapter refuses it at start-up too).
		u.Fragment, u.RawFragment = "", ""
		return fmt.Errorf("%q has a fragment (#…), which is never sent to the server: remove it (a query, ?api-version=…, is kept and sent with every request)", netredact.URL(u))
	}
	return nil
}

// publicAPIHosts are the providers' public API hosts the loader knows:
// they answer only over HTTPS, and every request to them carries the key.
var publicAPIHosts = []string{"api.openai.com", "api.anthropic.com"}

// plainHTTPToPublicAPI reports a base_url (checked by checkBaseURL) that is
// http:// to one of publicAPIHosts — an `s` dropped while typing — and the
// https:// URL to write instead: the Authorization or x-api-key header would
// cross the internet unencrypted with the first attempt, before any redirect
// to https:// could be answered. http:// to other hosts (vLLM, Ollama, an
// internal proxy) stays allowed.
func plainHTTPToPublicAPI(raw string) (host, https string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return "", "", false
	}
	h := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if !slices.Contains(publicAPIHosts, h) {
		return "", "", false
	}
	u.Scheme = "https"
	if u.Port() == "80" {
		u.Host = u.Hostname()
	}
	return h, netredact.URL(u), true
}

// anthropicVersioned reports an Anthropic base_url that ends in /v1 (as
// copied from Anthropic's documentation, https://api.anthropic.com/v1), and
// the API root to write instead.
func anthropicVersioned(raw string) (root string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	path := strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(strings.ToLower(path), "/v1") {
		return "", false
	}
	u.Path, u.RawPath = path[:len(path)-len("/v1")], ""
	return netredact.URL(u), true
}

// scriptProblems checks a scripted provider's steps, which would otherwise
// play something other than written: a negative latency answers at once, and
// a status outside 200–599 is no answer an HTTP provider gives.
func (p Provider) scriptProblems(where string) []string {
	var errs []string
	for i, st := range p.Script {
		if st.Latency < 0 {
			errs = append(errs, fmt.Sprintf("%s.script[%d].latency (%s) is negative: write 0 (or leave it out) to answer at once, or a duration such as 200ms", where, i, st.Latency.D()))
		}
		if st.Status != 0 && (st.Status < 200 || st.Status > 599) {
			errs = append(errs, fmt.Sprintf("%s.script[%d].status (%d) is not an HTTP status a provider answers with: write one from 200 to 599 (an error status such as 429 or 500 plays that error), or leave it out to answer with output", where, i, st.Status))
		}
	}
	return errs
}
