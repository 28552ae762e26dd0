package race

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// judgeAnswer is sp.judge(resp) that survives a panic on what the provider
// answered (a router bug the answer exposes): the panic is logged with its
// stack and returned as err, so that a provider cannot crash the process
// (SPEC §17), as call does for the adapter.
func judgeAnswer(sp *spec, resp *providers.Response, log *slog.Logger) (doc json.RawMessage, violations []contract.Violation, err error) {
	defer func() {
		if v := recover(); v != nil {
			log.Error("judging a provider's answer panicked", "panic", v, "stack", string(debug.Stack()))
			doc, violations, err = nil, nil, fmt.Errorf("judging the answer panicked: %v", v)
		}
	}()
	doc, violations = sp.judge(resp)
	return doc, violations, nil
}

// unjudged records the end of an attempt whose answer could not be judged
// (judgeAnswer's err): failed, as an adapter that panicked on the answer
// fails its attempt (kind adapter_panic, a router fault, fail over), with
// the answer's usage, which the provider billed. That usage is counted in
// the metrics only when it was stored (finishAttempt's written), as for an
// invalid answer: an attempt another hand had already settled with usage of
// its own, or whose record could not be written, adds nothing to
// router_cost_usd_total that the job's cost_usd does not hold.
func (r *Runner) unjudged(ctx context.Context, job *store.Job, a *store.Attempt, resp *providers.Response, jerr error, res attemptResult, log *slog.Logger) attemptResult {
	pe := providers.NewError(a.Provider, providers.KindAdapterPanic, jerr.Error())
	pe.Received = true
	usage := resp.Usage
	pe.Usage, pe.ResponseID, pe.ResponseModel = &usage, resp.ResponseID, resp.Model
	res.state, res.err, res.usage = store.AttemptFailed, pe, usage
	res.reason = fmt.Sprintf("%s: %s", a.Provider, describe(pe))
	recorded, written := r.finishAttempt(ctx, job, a, store.AttemptOutcome{
		State: store.AttemptFailed, Error: attemptError(pe), Usage: usage,
		ProviderResponseID: resp.ResponseID, ResponseModel: resp.Model, LatencyMS: res.latency.Milliseconds(),
	}, log)
	if !recorded {
		return unrecorded(res, log) // still in flight in the database (runAttempt)
	}
	if !written {
		res.usage = providers.Usage{} // not stored: not counted either (runAttempt)
	}
	return res
}
