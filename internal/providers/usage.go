package providers

import "math"

// maxReportedTokens bounds one count a provider reports: far above any
// context window, small enough that sums and prices stay exact.
const maxReportedTokens = 1 << 40

// reportedUsage is a provider's token counts as the router keeps them: each
// between 0 and maxReportedTokens. A provider's negative or absurd count
// (a bug or a hostile server) would otherwise become a negative cost in the
// database and a counter the metrics library refuses (SPEC §17: a provider
// cannot crash the process or corrupt what the router records).
//
// The total is at least the sum of the two: a missing total (0) is the sum,
// and so is one smaller than the split (a gateway's {1000, 50, total 50}),
// so that the usage's parts add up to its total as docs/providers.md says
// every usage's do; the split is what is priced. A total larger than the
// split is kept: the race prices its gap (totalGapFilled).
func reportedUsage(prompt, completion, total int64) Usage {
	p, c := clampTokens(prompt), clampTokens(completion)
	t := max(clampTokens(total), p+c)
	return Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: t}
}

func clampTokens(n int64) int {
	return int(min(max(n, 0), maxReportedTokens))
}

// sumTokens adds counts a provider reports in parts (Anthropic's input,
// cache-creation and cache-read tokens) without wrapping.
func sumTokens(parts ...int64) int64 {
	var s int64
	for _, n := range parts {
		n = max(n, 0)
		if n > math.MaxInt64-s {
			return math.MaxInt64
		}
		s += n
	}
	return s
}
