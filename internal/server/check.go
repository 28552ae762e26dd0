package server

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/telemetry"
)

// Checked is what Check found in a configuration that passed.
type Checked struct {
	Prompts, Targets int
	// Warnings are the ones New logs at start, in its order: about the
	// OpenTelemetry environment (telemetry.EnvWarnings, when it asks for
	// trace export), the keys it reads (short keys) and the configuration
	// (targets).
	Warnings []string
}

// Check runs, on a loaded configuration, the checks New makes before it
// touches the database (starts, connects to or migrates it): the log
// settings, the OpenTelemetry environment (telemetry.CheckEnv and
// telemetry.EnvWarnings: no exporter is built), the prompts against the routes, every provider's target, the
// tenants', operator's and webhooks' secrets in the environment, the
// operator key not being a tenant's (prepare, which New runs too), and the
// database URL serve would connect to (database_url, or DATABASE_URL over
// it), parsed as store.Connect parses it but not dialled. `router config
// check` runs it, so that a configuration can be checked with a new binary
// before a rolling upgrade without serving or migrating. New refuses the
// first of these problems it meets; Check reports every one it can at once.
// It must stay in step with New.
func Check(cfg *config.Config) (Checked, error) {
	if _, err := Logger(cfg.Log); err != nil {
		return Checked{}, err
	}
	if _, err := cfg.Chat.BlankKeepAlive(); err != nil {
		return Checked{}, err
	}
	telemetryErr := telemetry.CheckEnv(os.Getenv)
	p, prepareErr := prepare(cfg)
	if prepareErr == nil {
		defer p.closeIdle()
	}
	if err := errors.Join(telemetryErr, prepareErr, databaseURLError(cfg)); err != nil {
		return Checked{}, err
	}
	var warnings []string
	// context.Background: the resource is read from the environment, waiting
	// on nothing (no detector that dials is used).
	for _, w := range telemetry.EnvWarnings(context.Background()) {
		warnings = append(warnings, w.String())
	}
	warnings = append(warnings, shortKeyWarnings(cfg, p.opsKey)...)
	return Checked{Prompts: len(p.prompts.All()), Targets: len(p.targets),
		Warnings: append(warnings, cfg.Warnings()...)}, nil
}

// databaseURLError is why store.Connect would refuse the database URL serve
// uses before dialling (store.PoolConfig: a port that is no number, a
// pool_max_conns that is none, a pool_min_conns above it, an sslrootcert it
// cannot read), nil when it would not or when serve uses the embedded
// database. pgconn's error shows
// the URL with its password masked.
func databaseURLError(cfg *config.Config) error {
	if embedded, _ := embeddedDatabase(cfg.DatabaseURL); embedded {
		return nil
	}
	if _, err := store.PoolConfig(cfg.DatabaseURL); err != nil {
		return fmt.Errorf("database URL (database_url, or DATABASE_URL over it), which serve would refuse before connecting: %w; "+
			"write it as postgres://user:password@host:5432/dbname (pool_* settings as numbers or durations, pool_min_conns no more than pool_max_conns, files it names readable) or as key=value settings", err)
	}
	return nil
}

// prepared is what New builds from the configuration and the environment
// before the database, once prepare's checks passed.
type prepared struct {
	prompts   *prompt.Set
	targets   map[string]*race.Target
	closeIdle func() // closes the providers' idle keep-alive connections
	apiKeys   map[string]string
	opsKey    string
}

// prepare loads and checks what New and Check both need before the
// database: the prompts against the routes, the providers' targets, the
// tenants' keys, the operator key and the webhook secrets, all checked
// before any of it is refused, so an operator learns of every problem in one
// start, not one restart each; then the operator key not being a tenant's.
// The webhook secrets are read again when the lifecycle starts. On an error
// the targets' idle connections are already closed.
func prepare(cfg *config.Config) (prepared, error) {
	prompts, promptsErr := LoadPrompts(cfg)
	targets, closeIdle, targetsErr := buildTargets(cfg, nil)
	apiKeys, keysErr := staticKeys(cfg)
	opsKey, opsErr := operatorKey(cfg)
	_, _, _, hooksErr := configWebhooks(cfg, os.Getenv)
	err := errors.Join(promptsErr, targetsErr, keysErr, opsErr, hooksErr)
	if err == nil {
		err = notATenantsKey(cfg, opsKey, apiKeys)
	}
	if err != nil {
		closeIdle()
		return prepared{}, err
	}
	return prepared{prompts: prompts, targets: targets, closeIdle: closeIdle, apiKeys: apiKeys, opsKey: opsKey}, nil
}
