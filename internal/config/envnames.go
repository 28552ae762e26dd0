package config

import "fmt"

// isEnvName says whether s is a portable environment variable name: letters,
// digits and underscores, not starting with a digit (POSIX, and what a shell
// can export).
func isEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := range len(s) {
		switch b := s[i]; {
		case b == '_', b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		default:
			return false
		}
	}
	return true
}

// envNameProblems checks every *_env setting. A value that is not a variable
// name is most often the secret itself pasted in its place; the messages
// never repeat it (and start-up, which would say "environment variable <it>
// is empty", is never reached), so the secret does not end up in logs.
func (c Config) envNameProblems() []string {
	var errs []string
	check := func(field, v string) {
		if v != "" && !isEnvName(v) {
			errs = append(errs, fmt.Sprintf("%s is not the name of an environment variable (letters, digits and _, not starting with a digit): write the name of the variable that holds the secret, never the secret itself; the value is not shown here in case it is one", field))
		}
	}
	check("ops_key_env", c.OpsKeyEnv)
	for i, k := range c.APIKeys {
		check(fmt.Sprintf("api_keys[%d].key_env", i), k.KeyEnv)
		if k.Webhook != nil {
			check(fmt.Sprintf("api_keys[%d].webhook.secret_env", i), k.Webhook.SecretEnv)
			check(fmt.Sprintf("api_keys[%d].webhook.previous_secret_env", i), k.Webhook.PreviousSecretEnv)
		}
	}
	for i, p := range c.Providers {
		check(fmt.Sprintf("providers[%d] (%s).api_key_env", i, p.Name), p.APIKeyEnv)
	}
	return errs
}
