package main

import (
	"fmt"
	"os"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// buildTargets mirrors cmd/router's (which lives in package main and cannot be
// imported): OpenAI-compatible and scripted providers.
func buildTargets(cfg *config.Config) (map[string]*race.Target, error) {
	out := map[string]*race.Target{}
	for _, pc := range cfg.Providers {
		t := &race.Target{
			Model: pc.Model, ContextWindow: pc.ContextWindow, Encoding: pc.Tokenizer,
			Timeout: pc.Timeout.D(), Stream: pc.Stream, MaxRetries: *pc.MaxRetries,
		}
		switch pc.Type {
		case "openai":
			p, err := providers.NewOpenAI(providers.OpenAIConfig{
				Name: pc.Name, BaseURL: pc.BaseURL, APIKey: os.Getenv(pc.APIKeyEnv), Model: pc.Model,
				Timeout: pc.Timeout.D(), StreamIdleTimeout: pc.StreamIdleTimeout.D(),
				SupportsLookup: pc.SupportsLookup, Stream: pc.Stream,
			})
			if err != nil {
				return nil, fmt.Errorf("provider %s: %w", pc.Name, err)
			}
			t.Provider = p
		default:
			return nil, fmt.Errorf("provider %s: routerprof supports only type openai", pc.Name)
		}
		out[pc.Name] = t
	}
	return out, nil
}

// buildRoutes mirrors cmd/router's.
func buildRoutes(cfg *config.Config) map[string]*race.Route {
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
