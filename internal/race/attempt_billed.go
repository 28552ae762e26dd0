package race

import (
	"unicode/utf8"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// billedOutcome is the start of the record of an attempt that failed with pe:
// when the adapter failed a complete answer the provider billed (pe.Usage: a
// refusal, a content filter, a paused turn), the answer's usage, id and model,
// so that the attempt has its tokens and cost_usd like an `invalid` answer,
// and the job's lost_cost_usd counts it; a total larger than its split
// is priced whole, as an answer's is (totalGapFilled). usage is the same
// figure for the metrics (tokens, router_cost_usd_total); zero when nothing
// was billed.
//
// A count no request to the target can reach is not priced
// (plausibleUsage), and neither is a total with no split (billedUsage).
func billedOutcome(t *Target, sp *spec, a *store.Attempt, pe *providers.Error) (out store.AttemptOutcome, usage providers.Usage) {
	if pe.Usage == nil {
		// Usage stays a nil interface: a nil *Usage in it would be stored as
		// JSON null rather than SQL NULL.
		return out, usage
	}
	usage = billedUsage(t, sp, a, pe)
	out.Usage, out.ProviderResponseID, out.ResponseModel = usage, pe.ResponseID, pe.ResponseModel
	return out, usage
}

// billedUsage is the usage to record of a failure the provider billed
// (pe.Usage, not nil), live or found by reconciliation: its counts bounded
// (plausibleUsage) and its total's gap filled (totalGapFilled). A usage with
// a total but no split (prompt and completion tokens 0: a gateway that
// reports only total_tokens) cannot be priced — the attempt would cost
// nothing in cost_usd, lost_cost_usd and router_cost_usd_total although the
// provider billed it — so it is estimated as a winner's is (answerEstimate):
// the prompt counted as for estimatedUsage, the answer (answerOf: the
// complete answer the adapter failed, or the part of it that came) by the
// same tokenizer, total_tokens their sum, marked Estimated, the provider's
// details kept. When the prompt cannot be counted the usage stays as
// reported. A split whose completion count is 0 next to the answer's text
// has it raised to the router's count of that text, as a winner's is
// (zeroOutputRaised): the provider billed that output. Only those holes are
// filled: a completion count the provider gave is kept.
func billedUsage(t *Target, sp *spec, a *store.Attempt, pe *providers.Error) providers.Usage {
	text := answerOf(pe)
	u, _ := plausibleUsage(t, sp, a, *pe.Usage, text)
	u, _ = totalGapFilled(u)
	if raised, ok := zeroOutputRaised(t, sp, a, u, text); ok {
		return raised
	}
	if u.PromptTokens != 0 || u.CompletionTokens != 0 || pe.Usage.TotalTokens <= 0 {
		return u // a split, or no tokens reported at all: nothing billed to estimate
	}
	in, ok := promptEstimate(t, sp, a)
	if !ok {
		return u
	}
	out, ok := textEstimate(t, sp, a, text)
	if !ok {
		out = 0 // the prompt's estimate stands alone, as estimatedUsage's does
	}
	u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.Estimated = in, out, in+out, true
	return u
}

// estimatedUsage is what the provider most likely billed for an attempt
// whose request was sent and whose answer the router never read whole — a
// hedge loser cancelled in flight, an attempt cut before any response byte
// (unknown), or one that failed after its provider had begun answering with
// no usage reported (a stream cut, stalled or malformed, a stream_timeout, a
// cut by the job's deadline or the router's shutdown after the first byte):
// a provider that answered certainly received, and billed, the prompt. So
// is an attempt in flight when the caller cancelled its job: the
// cancellation settles it without usage, and its own run adds the estimate
// afterwards (Runner.cancelledUsage). The estimate is the prompt's tokens,
// counted by the target's tokenizer, marked Estimated. A provider bills the
// input of a request it received whether or not anyone reads the answer, so
// without this a hedge's cost, the job's lost_cost_usd and
// router_cost_usd_total counted nothing for the losers that hedging pays
// for, nor for the answers cut mid-way that a failover pays for, nor for a
// cancelled job's requests. The part of the answer that had come before the
// stream broke or was cancelled (providers.Error.Partial: reasoning, content,
// refusal, tool calls) is counted as completion tokens by the same tokenizer, as
// answerUsage counts an answer's: the provider billed the output it had
// generated, and output tokens cost several times input tokens, so a hedge
// loser that streamed most of its answer before the hedge won was costed at
// a fraction of its price. What the provider generated and had not yet sent
// is not guessed, so the completion part falls short of what was billed
// when the answer was cut; the counts themselves are the router's
// tokenizer's, which for a model whose own tokenizer the router does not
// have (Claude, Llama, Mistral: cl100k_base) may be above or below the
// provider's, and over maxTokenizedBytes are scaled from a head (see
// below): the figure is an estimate, not a bound. ok is false for an attempt
// that was not sent, one whose provider reported usage or answered with an
// error (an error status, or an error event that came in place of the answer
// in a 200 stream: providers.Error.AnsweredWithError), any other end, or a
// prompt the tokenizer cannot count. An error with a status that came after
// part of the answer is an answer cut, not refused: it is estimated.
//
// The count is the tokenizer's up to maxTokenizedBytes of prompt; a larger
// prompt is estimated from its head of maxTokenizedBytes, counted by the
// tokenizer and scaled by length (promptEstimate), since tokenizing it
// whole would cost tens of milliseconds of CPU or more for each loser
// (routing, for the same reason, counts only prompts that may not fit:
// byteBound).
func estimatedUsage(t *Target, sp *spec, a *store.Attempt, state string, pe *providers.Error) (providers.Usage, bool) {
	cutAnswer := state == store.AttemptFailed && pe.Received
	// A failed generation answered with an error status (Groq's 400
	// tool_use_failed: the model ran, the provider billed it) is the one
	// error status that is billed: the providers classify only it as a
	// received malformed_response with a status of 400 or more.
	generated := pe.Kind == providers.KindMalformedResponse && pe.Received && pe.StatusCode >= 400
	// So is an answer cut by an error the provider reported after it had
	// begun answering: part of the answer came (providers.Error.Partial)
	// before an error object with a numeric code (vLLM's
	// {"object":"error",…,"code":500} mid-stream, OpenRouter's "error"
	// beside a chunk) gave the error its status. The model ran: the prompt
	// and the part generated were billed, as for a stream cut.
	began := pe.Received && partialOf(pe) != ""
	if (state != store.AttemptCancelled && state != store.AttemptUnknown && !cutAnswer) || pe.NotSent || pe.Usage != nil ||
		(pe.StatusCode != 0 && !generated && !began) || pe.AnsweredWithError {
		// Not sent, or the provider answered (its usage, or an error — a
		// status, or an error event in place of the answer in a 200
		// stream: nothing billed that the router knows of).
		return providers.Usage{}, false
	}
	n, ok := promptEstimate(t, sp, a)
	if !ok {
		return providers.Usage{}, false
	}
	out, ok := textEstimate(t, sp, a, answerOf(pe))
	if !ok {
		// The prompt was counted: it is billed whatever became of the
		// answer, and its estimate stands alone.
		out = 0
	}
	return providers.Usage{PromptTokens: n, CompletionTokens: out, TotalTokens: n + out, Estimated: true}, true
}

// partialOf is the part of the answer that had come before pe's call
// failed (providers.Error.Partial): pe's own, or, for an error runAttempt
// relabelled (a cut by the job's deadline or the router's shutdown), that
// of the adapter's error it wraps.
func partialOf(pe *providers.Error) string {
	if pe.Partial != "" {
		return pe.Partial
	}
	if inner, ok := providers.AsError(pe.Err); ok {
		return inner.Partial
	}
	return ""
}

// answerOf is the text of the answer pe's call failed on, as far as the
// router has it: the part that had come (partialOf) or, for a complete
// answer the adapter failed (a refusal, a content filter, a finish reason
// that does not say it is whole, a bad tool call), the whole of it
// (providers.Error.Answer) — pe's own, or that of the adapter's error it
// wraps (partialOf). It fills only the holes of what the provider
// reported (billedUsage, estimatedUsage); a provisional count is raised
// from the part that came alone (provisionalUsage), so that a final count
// the provider gave is never estimated over.
func answerOf(pe *providers.Error) string {
	if partial := partialOf(pe); partial != "" {
		return partial
	}
	if pe.Answer != "" {
		return pe.Answer
	}
	if inner, ok := providers.AsError(pe.Err); ok {
		return inner.Answer
	}
	return ""
}

// provisionalUsage is usage, the provider's own count for an answer cut or
// cancelled part-way, with its completion tokens raised to the router's count
// of the part that had come (providers.Error.Partial) when the provider's
// output count was still provisional and lower — Anthropic's message_start
// reports output_tokens 1 before any output, and the real count comes only in
// message_delta, at the end: a loser that had streamed a long answer was
// costed at one output token. The input tokens stay the provider's; the
// result is marked Estimated. ok is false when there is nothing to raise.
func provisionalUsage(t *Target, sp *spec, a *store.Attempt, usage providers.Usage, pe *providers.Error) (providers.Usage, bool) {
	partial := partialOf(pe)
	if partial == "" || usage == (providers.Usage{}) {
		return usage, false
	}
	n, ok := textEstimate(t, sp, a, partial)
	if !ok || n <= usage.CompletionTokens {
		return usage, false
	}
	usage.TotalTokens += n - usage.CompletionTokens
	usage.CompletionTokens, usage.Estimated = n, true
	return usage, true
}

// answerUsage is the usage of an answer its provider reported none for — an
// OpenAI-compatible stream without its usage chunk (a server or gateway that
// ignores stream_options.include_usage, a stream that ended whole after its
// finish_reason without it), an endpoint whose answers carry no usage: the
// prompt counted as for estimatedUsage, and the answer's content and tool
// calls by the same tokenizer, marked Estimated. The provider billed the
// answer all the same: reported as zero, a winner cost nothing in cost_usd,
// router_cost_usd_total and the caller's usage. ok is false when the
// provider reported a usable count whose parts add up to its total (its
// figures are kept as they are) or the tokenizer cannot count.
//
// A usage with a total but no split (prompt and completion tokens 0: a
// gateway that reports only total_tokens) cannot be priced either: it is
// estimated as if none had come, and total_tokens becomes the sum of the
// router's counts — the provider's total is not kept, so that the usage's
// parts add up to its total as every other usage's do. A reported
// completion count of 0 for an answer with content or tool calls is raised
// to the router's count of the answer, the provider's prompt tokens kept and
// its total raised by as much, marked Estimated: the provider billed that
// output. Otherwise a provider that reported a split is taken at its word,
// all of its total included: a total larger than its split has its
// completion tokens raised to the total less the prompt tokens first
// (totalGapFilled), and ok is true.
//
// An answer whose adapter estimated its output count (marked Estimated: an
// Anthropic stream whose message_delta gave no output count, estimated at 4
// bytes a token over message_start's provisional 1) has its completion
// tokens recounted by the same tokenizer; its prompt tokens stay the
// provider's. ok is false when the tokenizer cannot count: the adapter's
// estimate stays.
//
// A count no request to the target can reach is not taken first
// (plausibleUsage): it is estimated, and the usage marked Estimated; its
// plausible counts are kept as reported. What is left is judged as above:
// a garbage total with no split (a total-only gateway's unsigned −1) is
// bounded to 0 + 0 and then estimated as a total with no split, and a
// completion count of 0 beside one is raised — a garbage figure does not
// make an answer cheaper than a sane one.
//
// It is the usage of every answer the router judges, live or found by
// reconciliation (reconcileOne).
func answerUsage(t *Target, sp *spec, a *store.Attempt, resp *providers.Response) (providers.Usage, bool) {
	u, bounded := plausibleUsage(t, sp, a, resp.Usage, generatedTexts(resp)...)
	u, filled := totalGapFilled(u)
	if est, ok := answerEstimate(t, sp, a, resp, u); ok {
		return est, true
	}
	return u, filled || bounded
}

// maxPlausibleTokens is usageBound for a target whose context window the
// router does not know, and the largest total_tokens gap totalGapFilled
// prices: no model's window is near it.
const maxPlausibleTokens = 10_000_000

// usageBound is the most tokens any one count of an attempt's usage can be:
// usageMargin times the target's context window plus the max_tokens sent
// (for a provider whose window does not hold the output), or
// maxPlausibleTokens when the window is not known. The margin because the
// window is the operator's, set to what routing's count lets through: that
// count runs low against the provider's (by a third for numbers, up to 3×
// for runs of digits: docs/prompts.md), and the default window (128,000)
// may be smaller than the model's. A garbage count (2^32−1, 1e30) is far
// above it either way.
func usageBound(t *Target, sp *spec) int {
	w := t.ContextWindow
	if w <= 0 {
		w = t.ProviderWindow
	}
	if w <= 0 {
		return maxPlausibleTokens
	}
	n, _ := tokens.MaxTokensSent(sp.maxTokens, t.DefaultMaxTokens)
	return usageMargin * (w + n)
}

// usageMargin is how far past the window and max_tokens a count is still
// taken as reported (usageBound).
const usageMargin = 4

// plausibleUsage is u, a provider's usage, without the counts no request to
// the target can reach (over usageBound): a gateway's total_tokens of
// 4294967295 (an unsigned -1) or 1e30 (clamped to 2^40) for a 3-token
// answer was priced in full as output — 42,949 USD, or 11 million, at
// 10 USD/Mtok — into the job's cost_usd and router_cost_usd_total, which is
// never lowered. Such a prompt count is replaced by the router's count of
// the prompt, such a completion count by its count of texts (the answer, or
// the part of it that came), 0 when the tokenizer cannot count; the total
// becomes the sum of the two, and the usage is marked Estimated; a replaced
// prompt count bounds its cached_tokens (never more than the prompt). ok is
// false (u as it is) when every count is plausible.
func plausibleUsage(t *Target, sp *spec, a *store.Attempt, u providers.Usage, texts ...string) (providers.Usage, bool) {
	// The window of the model sent, as routing judged it: a model passed
	// through may hold far more than t's own.
	judged, _ := judgedAs(t, sp, a)
	bound := usageBound(judged, sp)
	if u.PromptTokens <= bound && u.CompletionTokens <= bound && u.TotalTokens <= bound {
		return u, false
	}
	if u.PromptTokens > bound {
		u.PromptTokens, _ = promptEstimate(t, sp, a)
		// The cached part was bounded (anthropicUsage) by the garbage
		// count only: no more of the prompt is cached than the prompt.
		u.PromptTokensDetails.CachedTokens = min(u.PromptTokensDetails.CachedTokens, u.PromptTokens)
	}
	if u.CompletionTokens > bound {
		u.CompletionTokens, _ = textEstimate(t, sp, a, texts...)
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	u.Estimated = true
	return u, true
}

// answerEstimate is answerUsage's estimate of u, an answer's usage bounded
// and with its total's gap filled: ok is false when there is none to make.
// The output is recounted when the adapter estimated it (resp.Usage marked
// Estimated), not when plausibleUsage did: its bound keeps the plausible
// counts as reported. Every count is of the answer the provider generated
// (generatedTexts): the text the adapter cut away at a stop of its own
// included.
func answerEstimate(t *Target, sp *spec, a *store.Attempt, resp *providers.Response, u providers.Usage) (providers.Usage, bool) {
	if resp.Usage.Estimated {
		return outputRecounted(t, sp, a, u, generatedTexts(resp)...)
	}
	if generatedAny(resp) {
		if raised, ok := zeroOutputRaised(t, sp, a, u, generatedTexts(resp)...); ok {
			return raised, true
		}
	}
	if u.PromptTokens != 0 || u.CompletionTokens != 0 {
		return providers.Usage{}, false
	}
	in, ok := promptEstimate(t, sp, a)
	if !ok {
		return providers.Usage{}, false
	}
	out, ok := textEstimate(t, sp, a, generatedTexts(resp)...)
	if !ok {
		return providers.Usage{}, false
	}
	u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.Estimated = in, out, in+out, true
	return u, true
}

// zeroOutputRaised is u, a usage with a split (bounded and its total's gap
// filled), whose completion count is 0 although the provider generated texts
// (an answer's, or a billed failure's: answerOf), with that count raised to
// the router's count of texts, the prompt tokens kept and the total raised
// by as much, marked Estimated (outputRecounted): the provider billed that
// output. ok is false when u has no split or a completion count, or texts
// count no token (none, or the tokenizer cannot count them).
func zeroOutputRaised(t *Target, sp *spec, a *store.Attempt, u providers.Usage, texts ...string) (providers.Usage, bool) {
	if u.CompletionTokens != 0 || u.PromptTokens == 0 {
		return u, false
	}
	raised, ok := outputRecounted(t, sp, a, u, texts...)
	if !ok || raised.CompletionTokens == 0 {
		return u, false
	}
	return raised, true
}

// outputRecounted is u with its completion tokens replaced by the router's
// count of texts, its total moved by as much, marked Estimated. ok is false
// (u as it is) when the tokenizer cannot count them.
func outputRecounted(t *Target, sp *spec, a *store.Attempt, u providers.Usage, texts ...string) (providers.Usage, bool) {
	out, ok := textEstimate(t, sp, a, texts...)
	if !ok {
		return u, false
	}
	u.TotalTokens += out - u.CompletionTokens
	u.CompletionTokens, u.Estimated = out, true
	return u, true
}

// totalGapFilled is u with its completion tokens raised to its total_tokens
// less its prompt_tokens when the total is larger than the two together (ok
// true): an OpenAI-compatible gateway in front of a thinking model (Gemini's)
// reports the model's thoughts only in total_tokens (and in
// completion_tokens_details.reasoning_tokens) — completion_tokens 198 and a
// total of 623 for a prompt of 20, or completion_tokens 0 and a total of 81
// for a prompt of 21 — and bills the whole total, the thoughts at the output
// price. Priced from the split alone (providers.Price.Cost, the store's
// cost_usd), such an answer was costed at a fraction of its price. The
// figures stay the provider's: the usage is not marked Estimated. A usage
// with no split at all (both 0) is not filled: answerUsage estimates it. Nor
// is a gap over maxPlausibleTokens, which no model generates (a garbage
// total, where plausibleUsage has no spec to bound it by: a reconciled
// failure whose job's request this deployment cannot rebuild,
// reconciledBilled).
func totalGapFilled(u providers.Usage) (providers.Usage, bool) {
	if u.PromptTokens < 0 || u.CompletionTokens < 0 || (u.PromptTokens == 0 && u.CompletionTokens == 0) ||
		u.TotalTokens-u.PromptTokens <= u.CompletionTokens || u.TotalTokens-u.PromptTokens > maxPlausibleTokens {
		return u, false
	}
	u.CompletionTokens = u.TotalTokens - u.PromptTokens
	return u, true
}

// textEstimate counts the tokens of an answer's texts with the attempt's
// target's tokenizer; a text over maxTokenizedBytes is estimated from its
// first maxTokenizedBytes (tokens.EstimateTextFor). ok is false when the tokenizer
// cannot count them.
func textEstimate(t *Target, sp *spec, a *store.Attempt, texts ...string) (out int, ok bool) {
	for _, text := range texts {
		if text == "" {
			continue
		}
		enc, err := targetEncoding(t, sp, a)
		if err != nil {
			return 0, false
		}
		n, err := tokens.EstimateTextFor(sp.owner, enc, text)
		if err != nil {
			return 0, false
		}
		out += n
	}
	return out, true
}

// promptEstimate counts the prompt an attempt sent with its target's
// tokenizer; a prompt whose byteBound is over maxTokenizedBytes is estimated
// from its head of that size (headMessages, scaledCount). ok is false when
// the tokenizer cannot count it.
func promptEstimate(t *Target, sp *spec, a *store.Attempt) (n int, ok bool) {
	enc, err := targetEncoding(t, sp, a)
	if err != nil {
		return 0, false
	}
	return PromptEstimate(sp.owner, enc, counted(sp))
}

// PromptEstimate is the race's estimate of the prompt msgs (what a request
// counts: tokens.Counted) with encoding, through owner's count cache: the
// count of msgs, or, when their byteBound is over maxTokenizedBytes, of
// their head of that size (headMessages) scaled by length (scaledCount). An
// operator's resolution of an attempt with no usage counts its prompt so
// (api's resolvedUsage), as the attempt's own race would have. ok is false
// when the tokenizer cannot count it.
func PromptEstimate(owner, encoding string, msgs []providers.Message) (n int, ok bool) {
	head, b := msgs, byteBound(msgs)
	if b > maxTokenizedBytes {
		head = headMessages(msgs, maxTokenizedBytes)
	}
	n, err := tokens.CountMessagesFor(owner, encoding, head)
	if err != nil {
		return 0, false
	}
	if b > maxTokenizedBytes {
		n = scaledCount(n, byteBound(head), b)
	}
	return n, n > 0
}

// scaledCount is n, the tokens of a head of headBytes of a text of
// totalBytes, scaled to the whole text by its length: the whole is assumed
// to be tokenized as densely as its head. It is never below n.
func scaledCount(n, headBytes, totalBytes int) int {
	if headBytes <= 0 || totalBytes <= headBytes {
		return n
	}
	return int(int64(n) * int64(totalBytes) / int64(headBytes))
}

// headMessages is the head of msgs whose byteBound is at most limit: the
// messages in order, each field (as byteBound counts them) whole while it
// fits and the field that does not cut at a rune boundary, and nothing
// after it. Its count is what promptEstimate scales.
func headMessages(msgs []providers.Message, limit int) []providers.Message {
	left := limit - tokens.TokensReplyPrime
	take := func(s string) string {
		n := min(len(s), max(left, 0))
		if n < len(s) {
			n = runeCut(s, n)
		}
		left -= n
		return s[:n]
	}
	var head []providers.Message
	for _, m := range msgs {
		left -= tokens.TokensPerMessage
		if m.Name != "" {
			left -= tokens.TokensPerName
		}
		if left <= 0 {
			break
		}
		h := providers.Message{Role: take(m.Role), Name: take(m.Name), Content: take(m.Content),
			Refusal: take(m.Refusal), ToolCallID: take(m.ToolCallID)} // not ReasoningContent: neither counted nor measured (byteBound)
		if n := min(len(m.ToolCalls), max(left, 0)); n > 0 {
			if n < len(m.ToolCalls) {
				n = runeCut(m.ToolCalls, n)
			}
			left -= n
			h.ToolCalls = m.ToolCalls[:n:n]
		}
		head = append(head, h)
		if left <= 0 {
			break
		}
	}
	return head
}

// runeCut is the last rune boundary of s at or before n (n itself when s is
// not UTF-8 there), so that a head of s is not cut inside a character. s is
// longer than n.
func runeCut[T ~string | ~[]byte](s T, n int) int {
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return n
}

// targetEncoding is the tokenizer of the model an attempt asked for: that of
// the target the attempt is judged as (targetFor), the one routing counted
// its prompt with — not t's own, another model's when the model was passed
// through.
func targetEncoding(t *Target, sp *spec, a *store.Attempt) (string, error) {
	judged, model := judgedAs(t, sp, a)
	return tokens.EncodingForModel(judged.Encoding, model)
}

// judgedAs is the target attempt a on t is judged as (targetFor: the
// configured target of the model it asked for, t itself for t's own model),
// and that model.
func judgedAs(t *Target, sp *spec, a *store.Attempt) (*Target, string) {
	model := a.Model
	if model == "" {
		model = sp.model
	}
	return targetFor(sp.targets, a.Provider, t, model), model
}

// maxTokenizedBytes bounds the text the tokenizer counts for one estimate:
// of a prompt (by byteBound) or of each of an answer's texts. A larger one
// is estimated from its head of this size, scaled by length: tokenizing it
// whole would cost tens of milliseconds of CPU or more for each hedge loser
// (routing, for the same reason, counts only prompts that may not fit:
// byteBound).
const maxTokenizedBytes = tokens.EstimatedBytes
