package providers

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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

// anthropicToolIDs gives the tool calls of one request's history the ids
// they are sent under. The Messages API refuses a request in which two
// tool_use blocks have one id ("`tool_use` ids must be unique"), while
// OpenAI pairs each tool message with the assistant message right before it,
// so that an agent may reuse an id ("call_0") in every turn. A call whose id
// (as anthropicToolID maps it) an earlier call of the request was sent under
// gets a new one (reusedToolID), and the tool messages right after its
// assistant message — which answer it, as chat checks — name that one.
type anthropicToolIDs struct {
	sent map[string]bool   // the ids sent as a tool_use so far
	turn map[string]string // the calls of the last assistant message with calls: the caller's id → the id sent
}

// call returns the id to send for a call of messages[i] (an assistant's),
// the caller's id; first is true for the message's first call, which begins
// a new turn (the calls the tool messages after it answer).
func (t *anthropicToolIDs) call(i int, id string, first bool) string {
	if t.sent == nil {
		t.sent, t.turn = map[string]bool{}, map[string]string{}
	}
	if first {
		clear(t.turn)
	}
	sent := anthropicToolID(id)
	if sent != "" { // an empty id is the caller's error, which Anthropic names
		for n := 0; t.sent[sent]; n++ {
			sent = reusedToolID(anthropicToolID(id), id, i, n)
		}
		t.sent[sent] = true
	}
	t.turn[id] = sent
	return sent
}

// result returns the tool_use_id to send for a tool message answering id: the
// id its call was sent under.
func (t *anthropicToolIDs) result(id string) string {
	if sent, ok := t.turn[id]; ok {
		return sent
	}
	return anthropicToolID(id)
}

// reusedToolID is the new id of a call of messages[i] whose id, id (mapped),
// was already sent: mapped, cut to leave room, "_", and a hash of the
// caller's id, i and n (the n-th try, should that id be taken too), so that
// the same history always sends the same ids.
func reusedToolID(mapped, id string, i, n int) string {
	if len(mapped) > maxAnthropicToolIDPrefix {
		mapped = mapped[:maxAnthropicToolIDPrefix] // ASCII: anthropicToolIDChar
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", id, i, n))
	return mapped + "_" + hex.EncodeToString(sum[:])[:anthropicToolIDHashLen]
}
