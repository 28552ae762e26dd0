package netredact

import (
	"net/url"
	"strings"
)

// MinSecret is the shortest query value (or key) taken for a secret: shorter
// ones (a test's "k", a tenant's "a") would mangle ordinary words.
const MinSecret = 8

// VersionParam reports a query parameter that names an API version
// (Azure's api-version=2024-10-21): no secret, and shown.
func VersionParam(name string) bool {
	name = strings.ToLower(name)
	return name == "api-version" || name == "version" || name == "api_version"
}

// URL is u as a message or a log shows it: without user information, and
// with the value of each query parameter that may be a secret (a gateway's
// ?key=…: MinSecret bytes or more, not a version) replaced by "…". u is not
// modified.
func URL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = Query(u.RawQuery)
	return c.String()
}

// Query is rawQuery with the values that may be secrets replaced by "…"
// (URL).
func Query(rawQuery string) string {
	if rawQuery == "" {
		return ""
	}
	parts := strings.FieldsFunc(rawQuery, func(c rune) bool { return c == '&' || c == ';' })
	for i, kv := range parts {
		k, v, hasValue := strings.Cut(kv, "=")
		if name, err := url.QueryUnescape(k); err == nil && VersionParam(name) || !hasValue || len(v) < MinSecret {
			continue
		}
		parts[i] = k + "=…"
	}
	return strings.Join(parts, "&")
}
