package server

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/routerhq/router/internal/config"
)

// unsendableKeys refuses a provider's or the operator's key that holds white
// space or a control character inside it (around it, it is trimmed, as every
// key is): a secret file of two lines, two keys in one variable, "Bearer sk-…"
// pasted whole. No request header can carry a line break, so every call to
// the provider failed before it was sent — as kind unknown, its breaker
// opening, while the router reported ready; one with a space is sent and
// refused every time, and an operator key with one cannot be presented at
// all. Tenant keys are checked by staticKeys, webhook secrets by
// webhook.ValidateSecret. The messages name the setting and its variable
// (config.EnvRef), never the value.
func unsendableKeys(cfg *config.Config, getenv func(string) string) error {
	var errs []error
	for _, u := range cfg.SecretUses() {
		if u.Role != config.ProviderKey && u.Role != config.OpsKey {
			continue
		}
		v := strings.TrimSpace(getenv(u.Env))
		if !blankInside(v) {
			continue
		}
		if u.Role == config.OpsKey {
			errs = append(errs, fmt.Errorf("ops_key_env: %s holds white space or a control character inside the key, which no 'Authorization: Bearer <key>' header can carry: set the key alone, on one line (for example from `openssl rand -hex 32`)", config.EnvRef(u.Env)))
			continue
		}
		errs = append(errs, fmt.Errorf("provider %s: %s holds white space or a control character inside the key, which no request header can carry as it is: set the provider's key alone, on one line, without \"Bearer \" before it", u.Name, config.EnvRef(u.Env)))
	}
	return errors.Join(errs...)
}

// blankInside reports whether key (trimmed) holds white space or a control
// character, which no Authorization or API-key header can carry: the check
// of provider, operator and tenant keys (unsendableKeys, staticKeys).
func blankInside(key string) bool {
	return strings.IndexFunc(key, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0
}
