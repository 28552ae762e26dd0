package config

import (
	"fmt"
	"strings"
)

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

// keyPrefixes start API keys that are made only of letters, digits and _,
// so that pasted in place of a variable's name they pass isEnvName: Groq
// (gsk_), Hugging Face (hf_), xAI's older keys (xai_), Stripe-style and
// other sk_ keys, Fireworks (fw_), Replicate (r8_), GitHub tokens, and
// webhook secrets (whsec_, as `router keys create` makes them). AWS access
// key ids are matched by their whole shape (awsKeyID).
var keyPrefixes = []string{"gsk_", "hf_", "xai_", "sk_", "fw_", "r8_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "whsec_"}

// awsKeyID says whether s has the shape of an AWS access key id: AKIA or
// ASIA and 16 capitals and digits, 20 in all. Only that shape: a prefix
// check alone took ASIA_PACIFIC_API_KEY for a secret.
func awsKeyID(s string) bool {
	if len(s) != 20 || !strings.HasPrefix(s, "AKIA") && !strings.HasPrefix(s, "ASIA") {
		return false
	}
	return strings.Trim(s[4:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == ""
}

// secretShaped says whether s, a variable name as far as isEnvName goes, has
// the shape of a secret pasted in place of the name: a router API key ("rk_"
// and rand.Text's 26 base32 capitals and digits, store.CreateAPIKeyWith),
// a known key prefix followed by 16 or more characters, or a run between
// underscores of random-looking characters (randomLooking: Groq, Mistral,
// Google and AWS keys, hex tokens). No conventional name (OPENAI_API_KEY,
// ACME_KEY_2) has such a run.
func secretShaped(s string) bool {
	if rest, ok := strings.CutPrefix(s, "rk_"); ok && len(rest) == 26 && strings.Trim(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") == "" {
		return true
	}
	for _, p := range keyPrefixes {
		if len(s) >= len(p)+16 && strings.HasPrefix(s, p) {
			return true
		}
	}
	if awsKeyID(s) {
		return true
	}
	for run := range strings.SplitSeq(s, "_") {
		if randomLooking(run) {
			return true
		}
	}
	return false
}

// randomLooking says whether run (letters and digits) looks drawn at random
// rather than written: 16 or more characters mixing lower case, upper case
// and digits that change between these at least every second character
// (a random run changes at about three characters in five; words run
// together change only at their capitals: MyCompanyOpenAIKey2024), or
// 20 or more mixing letters and digits that change between the two at least
// 4 times. Words run together with a year or a number (ACME2024PRODUCTIONKEY,
// Acme2024ProductionKey) change too seldom.
func randomLooking(run string) bool {
	var n [3]int // lower, upper, digit
	changes, last := 0, -1
	for i := range len(run) {
		class := 0
		switch b := run[i]; {
		case b >= 'A' && b <= 'Z':
			class = 1
		case b >= '0' && b <= '9':
			class = 2
		}
		n[class]++
		if last >= 0 && class != last {
			changes++
		}
		last = class
	}
	letters := n[0] + n[1]
	return len(run) >= 16 && n[0] > 0 && n[1] > 0 && n[2] > 0 && 2*changes >= len(run) ||
		len(run) >= 20 && letters > 0 && n[2] > 0 && digitChanges(run) >= 4
}

// digitChanges counts the places in run where a letter follows a digit or a
// digit a letter.
func digitChanges(run string) int {
	changes := 0
	for i := 1; i < len(run); i++ {
		if isDigit(run[i]) != isDigit(run[i-1]) {
			changes++
		}
	}
	return changes
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// ShowEnvName reports whether a message may name the variable env: a
// conventional name (capitals, digits and _, starting with a capital, at
// most 64 bytes) without a secret's shape. Load refuses a secret-shaped
// *_env (envNameProblems); this keeps a start-up message from printing one
// in a configuration built some other way, and from printing an
// unconventional name that might be a secret the load check did not know.
func ShowEnvName(env string) bool {
	if env == "" || len(env) > 64 || env[0] < 'A' || env[0] > 'Z' || secretShaped(env) {
		return false
	}
	for i := range len(env) {
		if b := env[i]; !(b == '_' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9') {
			return false
		}
	}
	return true
}

// EnvRef is how a start-up message names the variable env of a *_env
// setting, after the setting's own path: "environment variable NAME", or,
// when ShowEnvName refuses it, a phrase that does not repeat it.
func EnvRef(env string) string {
	if ShowEnvName(env) {
		return "environment variable " + env
	}
	return "an environment variable whose name is not shown (it does not look like a variable's name, and may be a secret written in its place)"
}

// envNameProblems checks every *_env setting. A value that is not a variable
// name, or is one with the shape of a secret (a router API key, a provider's
// key), is most often the secret itself pasted in its place; the messages
// never repeat it (and start-up, which would say "environment variable <it>
// is empty", is never reached), so the secret does not end up in logs.
func (c Config) envNameProblems() []string {
	var errs []string
	check := func(field, v string) {
		switch {
		case v == "":
		case !isEnvName(v):
			errs = append(errs, fmt.Sprintf("%s is not the name of an environment variable (letters, digits and _, not starting with a digit): write the name of the variable that holds the secret, never the secret itself; the value is not shown here in case it is one", field))
		case secretShaped(v):
			errs = append(errs, fmt.Sprintf("%s has the shape of a secret (a router API key, a provider's API key, a long random string), not of an environment variable's name (such as ACME_API_KEY): write the name of the variable that holds the secret, never the secret itself; the value is not shown here, and if it is a secret, it is now in the configuration file: replace it", field))
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
