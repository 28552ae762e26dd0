package server

import (
	"fmt"
	"strings"

	"github.com/routerhq/router/internal/config"
)

// secretRole is one configured use of a secret read from the environment:
// what it is for, who is given it (holder) and what holding it allows
// (grants).
type secretRole struct {
	field, env     string
	party          string // who owns it: "operator", "owner X", "providers"
	holder, grants string
	bearer         bool   // an operator or tenant key (staticKeys, notATenantsKey compare those)
	hookURL        string // a webhook signing secret's receiver
}

// sharedSecrets refuses one value held by two secrets of different parties,
// naming both variables, never the value: each secret is given to whoever it
// is for, who could then use it as the other. A webhook secret equal to the
// operator key hands the operator surface (every owner's jobs) to a tenant's
// receiver; one equal to another owner's key or webhook secret lets one owner
// act as the other, or sign events the other's receiver accepts as the
// router's; a provider's API key, sent with every request to the provider,
// must be no tenant's, receiver's or operator's secret.
//
// An owner's key and its own webhook secret are refused too, as at load
// (config's secret variables): the receiver needs only the signing secret,
// not a key that calls the API as the owner.
//
// Allowed: one owner's current and previous webhook secrets; two providers'
// keys (the router's own accounts, e.g. one account behind two provider
// entries); two owners' webhook secrets whose webhooks go to the same URL
// (one receiver already holds both). Two bearer keys (two owners', or the
// operator's and an owner's) are refused by staticKeys and notATenantsKey.
// Empty values are left to the checks that refuse them.
func sharedSecrets(cfg *config.Config, getenv func(string) string) error {
	var roles []secretRole
	if cfg.OpsKeyEnv != "" {
		roles = append(roles, secretRole{field: "ops_key_env", env: cfg.OpsKeyEnv, party: "operator", bearer: true,
			holder: "the operator", grants: "opens the operator surface, which shows every owner's jobs"})
	}
	for i, k := range cfg.APIKeys {
		owner := "owner " + k.Owner
		roles = append(roles, secretRole{field: fmt.Sprintf("api_keys[%d].key_env", i), env: k.KeyEnv, party: owner, bearer: true,
			holder: owner, grants: "authenticates as " + owner})
		if k.Webhook == nil {
			continue
		}
		hook := secretRole{party: owner, holder: owner + "'s webhook receiver", hookURL: k.Webhook.URL,
			grants: "signs events " + owner + "'s webhook receiver accepts as the router's"}
		for _, f := range []struct{ name, env string }{{"secret_env", k.Webhook.SecretEnv}, {"previous_secret_env", k.Webhook.PreviousSecretEnv}} {
			if f.env != "" {
				hook.field, hook.env = fmt.Sprintf("api_keys[%d].webhook.%s", i, f.name), f.env
				roles = append(roles, hook)
			}
		}
	}
	for i, p := range cfg.Providers {
		if p.APIKeyEnv == "" || p.Type == "scripted" { // a scripted provider reads no key
			continue
		}
		roles = append(roles, secretRole{field: fmt.Sprintf("providers[%d] (%s).api_key_env", i, p.Name), env: p.APIKeyEnv, party: "providers",
			holder: "provider " + p.Name + " (every request to it carries its key)", grants: "spends on the router's account with provider " + p.Name})
	}
	values := make([]string, len(roles))
	for i, r := range roles {
		values[i] = strings.TrimSpace(getenv(r.env))
	}
	var problems []string
	for j, b := range roles {
		for i, a := range roles[:j] {
			if values[i] == "" || values[i] != values[j] || (a.party == b.party && a.bearer == b.bearer) || (a.bearer && b.bearer) ||
				(a.hookURL != "" && a.hookURL == b.hookURL) {
				continue
			}
			what := fmt.Sprintf("%s %s and %s %s hold the same value", a.field, a.env, b.field, b.env)
			if a.env == b.env {
				what = fmt.Sprintf("%s and %s both name %s", a.field, b.field, a.env)
			}
			problems = append(problems, fmt.Sprintf("%s: %s would hold a secret that %s, and %s one that %s",
				what, a.holder, b.grants, b.holder, a.grants))
			break // one pair for each role
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("secrets of different parties share one value (each is given to whoever it is for, who could then use it as the other):\n  %s\n"+
			"give each its own value (a key from `openssl rand -hex 32`; a webhook secret from `echo whsec_$(head -c 32 /dev/urandom | base64)`, given to its receiver too) and start again", strings.Join(problems, "\n  "))
	}
	return nil
}
