package race

import (
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// billedOutcome is the start of the record of an attempt that failed with pe:
// when the adapter failed a complete answer the provider billed (pe.Usage: a
// refusal, a content filter, a paused turn), the answer's usage, id and model,
// so that the attempt has its tokens and cost_usd like an `invalid` answer,
// and the job's lost_cost_usd counts it. usage is the same figure for the
// metrics (tokens, router_cost_usd_total); zero when nothing was billed.
func billedOutcome(pe *providers.Error) (out store.AttemptOutcome, usage providers.Usage) {
	if pe.Usage == nil {
		// Usage stays a nil interface: a nil *Usage in it would be stored as
		// JSON null rather than SQL NULL.
		return out, usage
	}
	usage = *pe.Usage
	out.Usage, out.ProviderResponseID, out.ResponseModel = usage, pe.ResponseID, pe.ResponseModel
	return out, usage
}
