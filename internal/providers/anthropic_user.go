package providers

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// maxAnthropicUserID is the longest metadata.user_id the Messages API
// accepts (256 characters; a longer one is refused with a 400), counted here
// in bytes, which are never fewer.
const maxAnthropicUserID = 256

// anthropicUserID is the caller's user as metadata.user_id, which Anthropic
// wants an opaque id (a UUID, a hash): it refuses one longer than 256
// characters and one that holds an e-mail address (400 "metadata.user_id:
// user_id appears to contain an email address. Please send a uuid or hash
// value instead."), values OpenAI-compatible providers take as they are.
// Such a user — too long, holding an e-mail address, or a phone number
// (personalIdentifier) — is sent as a stable hash of it ("sha256-" and 64
// hex digits): the same user still maps to the same id, as Anthropic's abuse
// detection wants, the job does not fail as a bad request, and the end
// user's address or number does not leave for Anthropic. Another user (an
// opaque id) is sent as it is.
func anthropicUserID(user string) string {
	if len(user) <= maxAnthropicUserID && !personalIdentifier(user) {
		return user
	}
	sum := sha256.Sum256([]byte(user))
	return "sha256-" + hex.EncodeToString(sum[:])
}

// anthropicEmailAddress matches an e-mail address anywhere in a user
// ("alice@example.com", "tenant-7:alice@example.com"): something, "@", and a
// domain with a dot.
var anthropicEmailAddress = regexp.MustCompile(`[^\s@]@[^\s@]+\.[^\s@.]`)

// personalIdentifier reports a user that holds an e-mail address, or is a
// phone number: digits alone, with an optional leading "+" and the usual
// separators (spaces, "-", ".", parentheses), 7 to 15 of them (E.164's
// longest), written as a phone number is — with a "+" or a separator — or
// 10 digits or more. A shorter run of bare digits ("1234567") is taken for
// the numeric id it most likely is, as are UUIDs and hex hashes (letters).
func personalIdentifier(user string) bool {
	if anthropicEmailAddress.MatchString(user) {
		return true
	}
	s := strings.TrimSpace(user)
	formatted := strings.HasPrefix(s, "+")
	s = strings.TrimPrefix(s, "+")
	digits := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == ' ' || r == '-' || r == '.' || r == '(' || r == ')':
			formatted = true
		default:
			return false
		}
	}
	return digits >= 7 && digits <= 15 && (formatted || digits >= 10)
}

// userIDRefused reports an invalid_request_error about metadata.user_id
// ("metadata.user_id: user_id appears to contain an email address…", a
// phone number, a length): a user the adapter did not spot as one
// Anthropic refuses. OpenAI-compatible targets take any user, so it is not
// a request the route's other targets refuse: like a feature this target
// lacks (featureUnsupported), it stays the request's bad_request — the
// caller's, which the target's breaker does not count — and fails over.
func userIDRefused(msg string) bool {
	return strings.Contains(strings.ToLower(msg), "metadata.user_id")
}
