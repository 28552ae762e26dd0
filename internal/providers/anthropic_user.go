package providers

import (
	"crypto/sha256"
	"encoding/hex"
)

// maxAnthropicUserID is the longest metadata.user_id the Messages API
// accepts (256 characters; a longer one is refused with a 400), counted here
// in bytes, which are never fewer.
const maxAnthropicUserID = 256

// anthropicUserID is the caller's user as metadata.user_id. One longer than
// Anthropic accepts is sent as a stable hash of it ("sha256-" and 64 hex
// digits): the same user still maps to the same id, as Anthropic's abuse
// detection wants, and the job does not fail as a bad request for an
// identifier that OpenAI-compatible providers take as it is.
func anthropicUserID(user string) string {
	if len(user) <= maxAnthropicUserID {
		return user
	}
	sum := sha256.Sum256([]byte(user))
	return "sha256-" + hex.EncodeToString(sum[:])
}
