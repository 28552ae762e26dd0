package server

import (
	"fmt"
	"os"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// BuildTargets makes every configured provider's adapter.
func BuildTargets(cfg *config.Config) (map[string]*race.Target, error) {
	out := map[string]*race.Target{}
	for _, pc := range cfg.Providers {
		t := &race.Target{
			Model: pc.Model, ContextWindow: pc.ContextWindow, Encoding: pc.Tokenizer,
			Timeout: pc.Timeout.D(), Stream: pc.Stream, MaxRetries: *pc.MaxRetries,
		}
		switch pc.Type {
		case "openai":
			key := ""
			if pc.APIKeyEnv != "" {
				key = os.Getenv(pc.APIKeyEnv)
				if key == "" {
					return nil, fmt.Errorf("provider %s: environment variable %s is empty: export the provider's API key", pc.Name, pc.APIKeyEnv)
				}
			}
			p, err := providers.NewOpenAI(providers.OpenAIConfig{
				Name: pc.Name, BaseURL: pc.BaseURL, APIKey: key, Model: pc.Model,
				Timeout: pc.Timeout.D(), StreamIdleTimeout: pc.StreamIdleTimeout.D(),
				SupportsLookup: pc.SupportsLookup, Stream: pc.Stream, MaxIdleConns: pc.MaxIdleConns,
			})
			if err != nil {
				return nil, fmt.Errorf("provider %s: %w", pc.Name, err)
			}
			t.Provider = p
		case "scripted":
			steps := make([]providers.Step, len(pc.Script))
			for i, s := range pc.Script {
				steps[i] = providers.Step{Latency: s.Latency.D(), Output: s.Output, Status: s.Status, Hang: s.Hang, Model: s.Model}
			}
			model := pc.Model
			if model == "" {
				model = "scripted-" + pc.Name
				t.Model = model
			}
			t.Provider = providers.NewScripted(providers.ScriptedConfig{Name: pc.Name, Model: model, Steps: steps})
		}
		out[pc.Name] = t
	}
	return out, nil
}

// BuildRoutes turns the configured routes into the runner's.
func BuildRoutes(cfg *config.Config) map[string]*race.Route {
	out := map[string]*race.Route{}
	for name, r := range cfg.Routes {
		hedge, adaptive := r.HedgeDelay()
		out[name] = &race.Route{
			Providers: r.Providers, HedgeAfter: hedge, AdaptiveHedge: adaptive,
			HedgeMin: r.HedgeMin.D(), HedgeMax: r.HedgeMax.D(),
			MaxInflight: r.MaxInflight, MaxAttempts: r.MaxAttempts, Deadline: r.Deadline.D(),
			FailoverOnContentPolicy: r.FailoverOnContentPolicy, KeepLosers: r.KeepLosers,
			ConformancePrompt: r.ConformancePrompt,
		}
	}
	return out
}
