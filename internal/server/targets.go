package server

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// BuildTargets makes every configured target (config.AllTargets), keyed by its
// id. Targets of one provider share its adapter; the model is sent per request.
func BuildTargets(cfg *config.Config) (map[string]*race.Target, error) {
	return BuildSelectedTargets(cfg, nil)
}

// BuildSelectedTargets makes the targets whose ids are in ids (every target
// when ids is empty), as BuildTargets does. Only the adapters of those
// targets' providers are built, so only their API keys need to be set: a
// command that calls one provider (router conformance run --provider P)
// does not need the others'.
func BuildSelectedTargets(cfg *config.Config, ids []string) (map[string]*race.Target, error) {
	out, _, err := buildTargets(cfg, ids)
	return out, err
}

// buildTargets is BuildSelectedTargets that also returns closeIdle, which
// closes the idle keep-alive connections of every adapter built (each
// provider's http.Transport, made here rather than by the adapter so that
// it can be reached): a Server calls it as it closes (New), once nothing
// calls a provider any more, rather than leave the connections and their
// goroutines to the idle timeout. A connection still in use is closed as
// it goes idle. Never nil.
func buildTargets(cfg *config.Config, ids []string) (_ map[string]*race.Target, closeIdle func(), _ error) {
	var transports []*http.Transport
	closeIdle = func() {
		for _, t := range transports {
			t.CloseIdleConnections()
		}
	}
	adapters := map[string]providers.Provider{}
	failed := map[string]bool{}
	scripted := scriptedNames(cfg)
	var errs []error // every provider that cannot be built, in one message
	out := map[string]*race.Target{}
	for _, rt := range cfg.AllTargets() {
		if len(ids) > 0 && !slices.Contains(ids, rt.ID) {
			continue
		}
		pc := rt.Provider
		if failed[pc.Name] {
			continue
		}
		p, ok := adapters[pc.Name]
		if !ok {
			var err error
			var tr *http.Transport
			if p, tr, err = buildAdapterAmong(pc, scripted); err != nil {
				failed[pc.Name] = true
				errs = append(errs, err)
				continue
			}
			adapters[pc.Name] = p
			if tr != nil {
				transports = append(transports, tr)
			}
		}
		t := targetOf(rt)
		t.Provider = p
		out[rt.ID] = t
	}
	if len(errs) > 0 {
		closeIdle()
		return nil, closeIdle, errors.Join(errs...)
	}
	return out, closeIdle, nil
}

// ConfiguredTargets is every configured target (config.AllTargets) by id,
// as BuildTargets makes it but without its adapter (Provider nil), so no API
// key is needed: what `router conformance run` counts a case sent with a
// model other than its target's own as (conformance.Options.Configured), as
// routing does.
func ConfiguredTargets(cfg *config.Config) map[string]*race.Target {
	out := map[string]*race.Target{}
	for _, rt := range cfg.AllTargets() {
		out[rt.ID] = targetOf(rt)
	}
	return out
}

// targetOf is target rt's settings, without its adapter.
func targetOf(rt config.ResolvedTarget) *race.Target {
	pc := rt.Provider
	t := &race.Target{
		Model: targetModel(rt), ContextWindow: rt.ContextWindow, ProviderWindow: pc.ContextWindow, Encoding: rt.Tokenizer,
		Timeout: pc.Timeout.D(), FirstByteTimeout: pc.FirstByteTimeout.D(), Stream: *pc.Stream, MaxRetries: *pc.MaxRetries,
	}
	if pc.Type == "anthropic" {
		// The adapter sends it when a request sets no max_tokens; routing
		// counts it against the window (the config fills the default).
		t.DefaultMaxTokens = cmp.Or(pc.MaxTokens, providers.AnthropicDefaultMaxTokens)
	}
	if price := rt.PriceOrDefault(); price != nil {
		t.Price = &providers.Price{InputPerMTok: price.InputPerMTok, OutputPerMTok: price.OutputPerMTok}
	}
	if pc.Model == "" && pc.Type != "scripted" && pc.Price != nil {
		// A provider naming no model prices every model it serves, those
		// passed through included (config.ResolvedTarget.ownModel).
		t.ProviderPrice = &providers.Price{InputPerMTok: pc.Price.InputPerMTok, OutputPerMTok: pc.Price.OutputPerMTok}
	}
	return t
}

// logTargetWarnings logs, at start, what the configuration allows but is
// likely a mistake (config.Warnings): a target left unpriced though its
// provider has a price (for the provider's own model, not the target's), a
// drain shorter than a first-byte deadline or a timeout, targets beyond a
// route's max_attempts.
func logTargetWarnings(cfg *config.Config, log *slog.Logger) {
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
}

// scriptedNames is the name of every scripted provider of cfg, in the
// configuration's order (never nil): the names a `#scripted@<name>:`
// directive may address (providers.ScriptedConfig.Peers).
func scriptedNames(cfg *config.Config) []string {
	names := []string{}
	for _, pc := range cfg.Providers {
		if pc.Type == "scripted" {
			names = append(names, pc.Name)
		}
	}
	return names
}

// buildAdapter makes one provider's adapter; a scripted one takes a
// directive addressed to any name (buildAdapterAmong).
func buildAdapter(pc *config.Provider) (providers.Provider, error) {
	p, _, err := buildAdapterAmong(pc, nil)
	return p, err
}

// buildAdapterAmong makes one provider's adapter. scripted, when not nil, is
// the name of every scripted provider of the configuration: a scripted
// adapter refuses a directive addressed to any other. An adapter that calls
// its provider over HTTP is given its transport — the one it would make
// itself (providers.NewTransport with max_idle_conns) — which is returned,
// so that its idle connections can be closed (buildTargets); nil for a
// scripted one.
func buildAdapterAmong(pc *config.Provider, scripted []string) (providers.Provider, *http.Transport, error) {
	key := ""
	if pc.APIKeyEnv != "" && pc.Type != "scripted" {
		// A key written from a file (a Kubernetes secret, an env file) ends
		// in a newline, which no request header can carry.
		key = strings.TrimSpace(os.Getenv(pc.APIKeyEnv))
		if key == "" {
			// The variable's name only when it looks like one
			// (config.EnvRef): not a key pasted in its place.
			return nil, nil, fmt.Errorf("provider %s: %s is empty or only white space: export the provider's API key (the variable its api_key_env names)", pc.Name, config.EnvRef(pc.APIKeyEnv))
		}
	}
	switch pc.Type {
	case "anthropic":
		tr := providers.NewTransport(pc.MaxIdleConns)
		p, err := providers.NewAnthropic(providers.AnthropicConfig{
			Name: pc.Name, BaseURL: pc.BaseURL, APIKey: key, Model: pc.Model, MaxTokens: pc.MaxTokens,
			Timeout: pc.Timeout.D(), FirstByteTimeout: pc.FirstByteTimeout.D(), StreamIdleTimeout: pc.StreamIdleTimeout.D(),
			Stream: pc.Stream == nil || *pc.Stream, MaxIdleConns: pc.MaxIdleConns, MaxResponseBytes: pc.MaxResponseBytes,
			HTTPClient: &http.Client{Transport: tr},
		})
		if err != nil {
			return nil, nil, fmt.Errorf("provider %s: %w", pc.Name, err)
		}
		return p, tr, nil
	case "openai":
		tr := providers.NewTransport(pc.MaxIdleConns)
		p, err := providers.NewOpenAI(providers.OpenAIConfig{
			Name: pc.Name, BaseURL: pc.BaseURL, APIKey: key, Model: pc.Model,
			Timeout: pc.Timeout.D(), FirstByteTimeout: pc.FirstByteTimeout.D(), StreamIdleTimeout: pc.StreamIdleTimeout.D(),
			SupportsLookup: pc.SupportsLookup, SendReasoningContent: pc.SendReasoningContent,
			Stream: *pc.Stream, MaxIdleConns: pc.MaxIdleConns, MaxResponseBytes: pc.MaxResponseBytes,
			HTTPClient: &http.Client{Transport: tr},
		})
		if err != nil {
			return nil, nil, fmt.Errorf("provider %s: %w", pc.Name, err)
		}
		return p, tr, nil
	case "scripted":
		steps := make([]providers.Step, len(pc.Script))
		for i, s := range pc.Script {
			steps[i] = providers.Step{Latency: s.Latency.D(), Output: s.Output, Status: s.Status, Hang: s.Hang, Model: s.Model}
		}
		model := pc.Model
		if model == "" {
			model = "scripted-" + pc.Name
		}
		return providers.NewScripted(providers.ScriptedConfig{Name: pc.Name, Model: model, Steps: steps, Peers: scripted}), nil, nil
	}
	return nil, nil, fmt.Errorf("provider %s: type %q is not openai, anthropic or scripted", pc.Name, pc.Type)
}

// BuildRoutes turns the configured routes into the runner's.
func BuildRoutes(cfg *config.Config) map[string]*race.Route {
	out := map[string]*race.Route{}
	for name, r := range cfg.Routes {
		hedge, adaptive := r.HedgeDelay()
		var ids []string
		for _, t := range cfg.RouteTargets(r) {
			ids = append(ids, t.ID)
		}
		rr := &race.Route{
			Providers: ids, HedgeAfter: hedge, AdaptiveHedge: adaptive,
			HedgeMin: r.HedgeMin.D(), HedgeMax: r.HedgeMax.D(),
			HedgeBudgetPercent: *r.HedgeBudget.Percent, HedgeBudgetMin: *r.HedgeBudget.MinConcurrent,
			MaxInflight: r.MaxInflight, MaxAttempts: r.MaxAttempts, Deadline: r.Deadline.D(),
			FailoverOnContentPolicy: r.FailoverOnContentPolicy, KeepLosers: r.KeepLosers,
			ConformancePrompt: r.ConformancePrompt,
		}
		if rr.HedgeBudgetPercent == 0 && rr.HedgeBudgetMin == 0 {
			// A budget of nothing: no call in flight beyond one per job — no
			// hedge, and no retry or failover beside another call (two
			// retries due at once in a resumed job). The race reads a zero
			// budget as none configured (race.Route), so max_inflight says it.
			rr.HedgeAfter, rr.AdaptiveHedge, rr.MaxInflight = 0, false, 1
		}
		out[name] = rr
	}
	return out
}

// targetModel is the model a target asks for: its own, or for a scripted
// provider without one a name of its own.
func targetModel(rt config.ResolvedTarget) string {
	if rt.Model == "" && rt.Provider.Type == "scripted" {
		return "scripted-" + rt.Provider.Name
	}
	return rt.Model
}
