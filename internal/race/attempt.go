package race

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// outcome is what an attempt's end means for its job.
type outcome struct {
	won    bool
	settle bool   // the job's state should be recomputed (nothing else will run)
	reason string // why the job fails, if it does
}

// runAttempt calls the provider for one attempt, judges the answer and records
// the attempt's end.
func (r *Runner) runAttempt(ctx context.Context, job *store.Job, a *store.Attempt, t *Target,
	p *prompt.Prompt, msgs []providers.Message) outcome {
	log := r.cfg.Log.With("job_id", job.ID, "attempt_id", a.ID, "owner", job.Owner, "provider", a.Provider, "seq", a.Seq)
	bg := context.WithoutCancel(ctx)
	if err := r.cfg.Store.MarkAttemptRunning(ctx, a.ID); err != nil {
		log.Info("attempt no longer starting; not sending", "err", err)
		return outcome{}
	}
	stopLease := r.keepLease(ctx, a.ID, log)
	defer stopLease()

	req := &providers.Request{
		AttemptID: a.ID, JobID: job.ID, Model: p.Model, Messages: msgs,
		Temperature: p.Temperature, MaxTokens: p.MaxTokens, Seed: p.Seed,
		ResponseFormat: p.ProviderResponseFormat(),
	}
	callCtx, cancel := context.WithTimeout(ctx, t.Timeout)
	start := time.Now()
	resp, err := r.call(callCtx, t, req)
	cancel()
	latency := time.Since(start).Milliseconds()

	if errors.Is(context.Cause(ctx), errShutdown) {
		// Abandoned: the lease expires and recovery decides, never a guess here.
		return outcome{}
	}
	if err != nil {
		pe := providers.Classify(a.Provider, err)
		state := store.AttemptFailed
		switch {
		case errors.Is(context.Cause(ctx), errJobCancelled) || pe.Kind == providers.KindCancelled:
			state = store.AttemptCancelled
		case pe.OutcomeUnknown:
			state = store.AttemptUnknown
		}
		log.Warn("attempt ended without an answer", "state", state, "kind", pe.Kind, "fault", pe.Fault, "action", pe.Action, "status", pe.StatusCode)
		if err := r.cfg.Store.FinishAttempt(bg, a.ID, store.AttemptOutcome{
			State: state, Error: attemptError(pe), LatencyMS: latency,
		}); err != nil && !errors.Is(err, store.ErrStateConflict) {
			log.Error("could not record attempt", "err", err)
		}
		return outcome{settle: true, reason: fmt.Sprintf("provider %s failed: %s", a.Provider, pe.Error())}
	}
	usage := resp.Usage
	doc, violations := p.Validator().Validate(resp.Content)
	if len(violations) > 0 {
		log.Warn("attempt output failed validation", "violations", len(violations), "first_rule", violations[0].Rule, "first_path", violations[0].Path)
		if err := r.cfg.Store.FinishAttempt(bg, a.ID, store.AttemptOutcome{
			State: store.AttemptInvalid, ValidationErrors: violations, Usage: usage,
			ProviderResponseID: resp.ResponseID, ResponseModel: resp.Model, LatencyMS: latency,
			Error: map[string]any{"kind": "invalid_output", "message": fmt.Sprintf("output failed %d contract check(s); first: %s", len(violations), violations[0].String())},
		}); err != nil && !errors.Is(err, store.ErrStateConflict) {
			log.Error("could not record attempt", "err", err)
		}
		return outcome{settle: true, reason: fmt.Sprintf("provider %s returned output that breaks the prompt's contract: %s", a.Provider, violations[0].String())}
	}
	won, err := r.cfg.Store.Complete(bg, store.Completion{
		JobID: job.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion, Result: doc, Usage: usage,
		ProviderResponseID: resp.ResponseID, ResponseModel: resp.Model, LatencyMS: latency,
	})
	if err != nil {
		log.Error("could not record completion; the lease will expire and recovery decides", "err", err)
		return outcome{}
	}
	log.Info("attempt completed", "won", won, "latency_ms", latency)
	return outcome{won: won}
}

// call uses the streaming API when the target asks for it and the adapter has it.
func (r *Runner) call(ctx context.Context, t *Target, req *providers.Request) (*providers.Response, error) {
	if s, ok := t.Provider.(providers.Streamer); ok && t.Stream {
		return s.CompleteStream(ctx, req, nil)
	}
	return t.Provider.Complete(ctx, req)
}

// keepLease renews the attempt's lease at a third of its length until stopped.
func (r *Runner) keepLease(ctx context.Context, attemptID string, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(r.cfg.Lease / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				ok, err := r.cfg.Store.RenewLease(ctx, attemptID, r.cfg.LeaseOwner, r.cfg.Lease)
				if err != nil && ctx.Err() == nil {
					log.Warn("could not renew attempt lease", "err", err)
				}
				if err == nil && !ok {
					return
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// attemptError is the attempt's `error` field: what happened, in words a person
// can act on, plus the taxonomy.
func attemptError(pe *providers.Error) map[string]any {
	m := map[string]any{"kind": pe.Kind, "fault": pe.Fault, "action": pe.Action, "message": pe.Error()}
	if pe.StatusCode != 0 {
		m["status"] = pe.StatusCode
	}
	if pe.Code != "" {
		m["code"] = pe.Code
	}
	if pe.RetryAfter > 0 {
		m["retry_after_ms"] = pe.RetryAfter.Milliseconds()
	}
	if pe.OutcomeUnknown {
		m["outcome_unknown"] = true
	}
	return m
}
