package server

import (
	"fmt"
	"strings"

	"github.com/routerhq/router/internal/config"
)

// sharedSecrets refuses one value held by two secrets of different parties,
// naming both variables, never the value: each secret is given to whoever it
// is for, who could then use it as the other. A webhook secret equal to the
// operator key hands the operator surface (every owner's jobs) to a tenant's
// receiver; one equal to another owner's key or webhook secret lets one owner
// act as the other, or sign events the other's receiver accepts as the
// router's; a provider's API key, sent with every request to the provider,
// must be no tenant's, receiver's or operator's secret.
//
// Which settings there are and which pairs may share are the configuration's
// (config.SecretUses, config.MayShare), as for the same variable named twice
// at load. Two bearer keys (two owners', or the operator's and an owner's)
// are refused by staticKeys and notATenantsKey. Empty values are left to the
// checks that refuse them.
func sharedSecrets(cfg *config.Config, getenv func(string) string) error {
	uses := cfg.SecretUses()
	values := make([]string, len(uses))
	for i, u := range uses {
		values[i] = strings.TrimSpace(getenv(u.Env))
	}
	var problems []string
	for j, b := range uses {
		for i, a := range uses[:j] {
			if values[i] == "" || values[i] != values[j] || config.MayShare(a, b) || (a.Bearer() && b.Bearer()) {
				continue
			}
			what := fmt.Sprintf("%s %s and %s %s hold the same value", a.Field, envName(a.Env), b.Field, envName(b.Env))
			if a.Env == b.Env {
				what = fmt.Sprintf("%s and %s both name %s", a.Field, b.Field, envName(a.Env))
			}
			problems = append(problems, fmt.Sprintf("%s: %s would hold a secret that %s, and %s one that %s",
				what, a.Holder(), b.Grants(), b.Holder(), a.Grants()))
			break // one pair for each setting
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("secrets of different parties share one value (each is given to whoever it is for, who could then use it as the other):\n  %s\n"+
			"give each its own value (a key from `openssl rand -hex 32`; a webhook secret from `echo whsec_$(head -c 32 /dev/urandom | base64)`, given to its receiver too) and start again", strings.Join(problems, "\n  "))
	}
	return nil
}

// envName is env as a start-up message shows it: its name when it looks like
// one (config.ShowEnvName), else a phrase that does not repeat it — it may be
// a secret written in its place.
func envName(env string) string {
	if config.ShowEnvName(env) {
		return env
	}
	return "(a variable whose name is not shown)"
}
