package providers

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxAnthropicToolIDPrefix bounds the kept part of a mapped tool call id, so
// that a mapped id (prefix, "_", hash) stays within 64 characters.
const maxAnthropicToolIDPrefix = 64 - 1 - anthropicToolIDHashLen

// anthropicToolIDHashLen is the length of the hash suffix of a mapped id.
const anthropicToolIDHashLen = 12

// anthropicToolID maps a tool call id onto what the Messages API accepts as
// a tool_use id and a tool_result's tool_use_id (^[a-zA-Z0-9_-]+$; another id
// is refused with a 400, which would stop the job as the caller's bad
// request). Ids from other providers break the pattern — Kimi's
// "functions.get_weather:0", those of MCP servers and proxies with ".", ":",
// "|" or "/" — though the router itself returned them to the caller. A valid
// id is kept as it is. Another has each invalid character replaced by "_" and
// a hash of the whole id appended, so that two ids that differ only in those
// characters stay apart; the mapping is deterministic, so a tool_use and the
// tool_result that answers it, mapped separately, still pair. An empty id is
// kept: it is the caller's error, which Anthropic names.
func anthropicToolID(id string) string {
	if id == "" || validAnthropicToolID(id) {
		return id
	}
	var b strings.Builder
	for _, r := range id {
		if b.Len() >= maxAnthropicToolIDPrefix {
			break
		}
		if anthropicToolIDChar(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(id))
	return b.String() + "_" + hex.EncodeToString(sum[:])[:anthropicToolIDHashLen]
}

func validAnthropicToolID(id string) bool {
	for _, r := range id {
		if !anthropicToolIDChar(r) {
			return false
		}
	}
	return true
}

func anthropicToolIDChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}
