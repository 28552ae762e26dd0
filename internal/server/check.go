package server

import (
	"errors"
	"os"

	"github.com/routerhq/router/internal/config"
)

// Checked is what Check found in a configuration that passed.
type Checked struct {
	Prompts, Targets int
	// Warnings are the ones New logs at start about the configuration and
	// the keys it reads (short keys, targets).
	Warnings []string
}

// Check runs, on a loaded configuration, the checks New makes before it
// touches the database (starts, connects to or migrates it): the log
// settings, the prompts against the routes, every provider's target, the
// tenants', operator's and webhooks' secrets in the environment, and the
// operator key not being a tenant's. `router config check` runs it, so that
// a configuration can be checked with a new binary before a rolling upgrade
// without serving or migrating. It must stay in step with New.
func Check(cfg *config.Config) (Checked, error) {
	if _, err := Logger(cfg.Log); err != nil {
		return Checked{}, err
	}
	if _, err := cfg.Chat.BlankKeepAlive(); err != nil {
		return Checked{}, err
	}
	prompts, promptsErr := LoadPrompts(cfg)
	targets, closeIdle, targetsErr := buildTargets(cfg, nil)
	if closeIdle != nil {
		defer closeIdle()
	}
	apiKeys, keysErr := staticKeys(cfg)
	opsKey, opsErr := operatorKey(cfg)
	_, _, _, hooksErr := configWebhooks(cfg, os.Getenv)
	if err := errors.Join(promptsErr, targetsErr, keysErr, opsErr, hooksErr); err != nil {
		return Checked{}, err
	}
	if err := notATenantsKey(cfg, opsKey, apiKeys); err != nil {
		return Checked{}, err
	}
	return Checked{Prompts: len(prompts.All()), Targets: len(targets),
		Warnings: append(shortKeyWarnings(cfg, opsKey), cfg.Warnings()...)}, nil
}
