package config

import (
	"net"
	"net/url"
	"strings"
)

// anthropicDefaultHost is where a type anthropic provider without a
// base_url sends its requests (and its key): the adapter's default,
// providers.AnthropicBaseURL (TestAnthropicDefaultHostIsTheAdapters keeps
// the two the same).
const anthropicDefaultHost = "https://api.anthropic.com"

// keyHost is where provider p's API key is sent: the scheme, host and port of
// its base_url — the adapter's default host when it has none — written
// scheme://host, with the port only when it is not the scheme's own (so that
// https://API.openai.com:443/v1 and https://api.openai.com/v2 are one host).
// It is "" when there is none to tell (an openai provider without a
// base_url, or one that is not a URL: refused on their own).
func keyHost(p Provider) string {
	raw := p.BaseURL
	if raw == "" {
		if p.Type == "anthropic" {
			raw = anthropicDefaultHost
		} else {
			return ""
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" || scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		if strings.Contains(host, ":") {
			host = "[" + host + "]" // IPv6
		}
		return scheme + "://" + host
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}
