package config

import (
	"fmt"
	"strings"
)

// SecretRole is what the secret in a *_env variable is for, which decides who
// is given it.
type SecretRole int

const (
	OpsKey        SecretRole = iota // ops_key_env: the operators
	TenantKey                       // api_keys[].key_env: the owner's API clients
	WebhookSecret                   // api_keys[].webhook.(previous_)secret_env: the receiver at the webhook's url
	ProviderKey                     // providers[].api_key_env: the router, and the provider it is sent to
)

// SecretUse is one *_env setting and the variable it names. The load-time
// check (the same variable named twice) and the start-time check (two
// variables holding one value, in server) both judge pairs of these with
// MayShare.
type SecretUse struct {
	Field string // the setting, as messages name it
	Env   string
	Role  SecretRole
	Owner string // TenantKey and WebhookSecret: the api_keys entry's owner
	URL   string // WebhookSecret: the receiver
	Name  string // ProviderKey: the provider
	Type  string // ProviderKey: the provider's type (its vendor's protocol)
	Host  string // ProviderKey: where its key is sent (keyHost), "" when unknown
	Entry int    // TenantKey: the api_keys index
}

// SecretUses is every *_env setting that names a variable whose secret is
// read, in file order. A scripted provider reads no key, so its api_key_env
// is none. A new *_env setting belongs here (TestEveryEnvSettingHasARole
// checks), and in envNameProblems.
func (c Config) SecretUses() []SecretUse {
	var uses []SecretUse
	use := func(u SecretUse) {
		if u.Env != "" && isEnvName(u.Env) && !secretShaped(u.Env) { // not a name, or a secret's shape: envNameProblems, never echoed
			uses = append(uses, u)
		}
	}
	use(SecretUse{Field: "ops_key_env", Env: c.OpsKeyEnv, Role: OpsKey})
	for i, k := range c.APIKeys {
		use(SecretUse{Field: fmt.Sprintf("api_keys[%d].key_env", i), Env: k.KeyEnv, Role: TenantKey, Owner: k.Owner, Entry: i})
		if h := k.Webhook; h != nil {
			use(SecretUse{Field: fmt.Sprintf("api_keys[%d].webhook.secret_env", i), Env: h.SecretEnv, Role: WebhookSecret, Owner: k.Owner, URL: h.URL})
			use(SecretUse{Field: fmt.Sprintf("api_keys[%d].webhook.previous_secret_env", i), Env: h.PreviousSecretEnv, Role: WebhookSecret, Owner: k.Owner, URL: h.URL})
		}
	}
	for i, p := range c.Providers {
		if p.Type != "scripted" {
			use(SecretUse{Field: fmt.Sprintf("providers[%d] (%s).api_key_env", i, p.Name), Env: p.APIKeyEnv, Role: ProviderKey, Name: p.Name,
				Type: p.Type, Host: keyHost(p)})
		}
	}
	return uses
}

// MayShare reports whether the secrets of a and b go to one party, so one
// secret may serve both:
//   - two providers at the same host (the scheme, host and port of
//     base_url; with none, the adapter's default host): one account's key,
//     for several provider entries (other models, deadlines or streaming,
//     another path or protocol of the same server — a LiteLLM proxy's
//     OpenAI and Anthropic formats, Anthropic's native and OpenAI-compatible
//     endpoints). A key named for providers at two hosts is sent to both:
//     the OpenAI key to Anthropic, or in clear to a self-hosted http://
//     server;
//   - the webhook of one owner, named in each of its entries (an owner's
//     entries must carry the same webhook), or as secret and previous secret
//     (one variable for both is refused, with its own message, by the
//     rotation check);
//   - the webhooks of two owners with the same url: the one receiver holds
//     the secret either way.
//
// Nothing else: an owner's key and its own webhook secret go to different
// holders (the receiver needs only the signing secret, not a key that calls
// the API as the owner).
func MayShare(a, b SecretUse) bool {
	switch {
	case a.Role == ProviderKey && b.Role == ProviderKey:
		return a.Host == b.Host
	case a.Role == WebhookSecret && b.Role == WebhookSecret:
		return a.Owner == b.Owner || a.URL == b.URL
	}
	return false
}

// Bearer reports whether u is a key the API accepts (the operator's or a
// tenant's).
func (u SecretUse) Bearer() bool { return u.Role == OpsKey || u.Role == TenantKey }

// Holder says who is given u's secret.
func (u SecretUse) Holder() string {
	switch u.Role {
	case OpsKey:
		return "the operator"
	case TenantKey:
		return "owner " + u.Owner
	case WebhookSecret:
		return "owner " + u.Owner + "'s webhook receiver"
	}
	return "provider " + u.Name + " (every request to it carries its key)"
}

// Grants says what holding u's secret allows.
func (u SecretUse) Grants() string {
	switch u.Role {
	case OpsKey:
		return "opens the operator surface, which shows every owner's jobs"
	case TenantKey:
		return "authenticates as owner " + u.Owner
	case WebhookSecret:
		return "signs events owner " + u.Owner + "'s webhook receiver accepts as the router's"
	}
	return "spends on the router's account with provider " + u.Name
}

// secretVarProblems refuses an environment variable named by two *_env
// settings whose secrets go to different parties: whoever is given it for
// one could use it as the other (a tenant opening the operator surface, a
// webhook receiver calling the API as its owner, a provider receiving a
// tenant's key, one owner's receiver signing events another's accepts).
// Only the names are compared here; two variables holding the same value are
// compared at start, where the values are read.
func (c Config) secretVarProblems() []string {
	var errs []string
	first := map[string][]SecretUse{} // variable → its earlier uses
	for _, u := range c.SecretUses() {
		for _, prev := range first[u.Env] {
			if !MayShare(prev, u) {
				errs = append(errs, secretShareProblem(prev, u))
				break // one message per setting
			}
		}
		first[u.Env] = append(first[u.Env], u)
	}
	return errs
}

// secretShareProblem says why the later setting u cannot name the variable
// that the earlier setting prev names (MayShare said they go to different
// parties).
func secretShareProblem(prev, u SecretUse) string {
	switch {
	case prev.Role == ProviderKey && u.Role == ProviderKey:
		clear := ""
		if strings.HasPrefix(prev.Host, "http://") || strings.HasPrefix(u.Host, "http://") {
			clear = ", and over http:// it travels in clear"
		}
		return fmt.Sprintf("%s: %s is also %s, but provider %s is %s and provider %s is %s: the one key would be sent to both, each of which could use it%s; "+
			"give each account a variable of its own (a separate api_key_env, holding that account's key): only providers at the same host (scheme, host and port of base_url) may share one",
			u.Field, u.Env, prev.Field, prev.Name, prev.where(), u.Name, u.where(), clear)
	case prev.Role == WebhookSecret && u.Role == WebhookSecret:
		return fmt.Sprintf("%s: %s is also %s (owner %s), whose webhook goes to another url: each receiver could sign events that the other accepts as the router's, about jobs that are not its owner's; "+
			"give each owner's webhook a variable of its own, holding a different secret (or, if both go to one receiver, give them the same url)", u.Field, u.Env, prev.Field, prev.Owner)
	case prev.Role == OpsKey && u.Role == TenantKey:
		// Reported from ops_key_env, as before this check covered every pair.
		return fmt.Sprintf("ops_key_env: %s is also %s (owner %s): that tenant's key would open the operator surface, which shows every owner's jobs; give the operator key a variable and a value of its own", prev.Env, u.Field, u.Owner)
	case prev.Role == TenantKey && u.Role == TenantKey:
		return fmt.Sprintf("%s: %s is also the key_env of api_keys[%d] (owner %s): one bearer key would authenticate as two entries; give each entry its own environment variable", u.Field, u.Env, prev.Entry, prev.Owner)
	}
	return fmt.Sprintf("%s: %s is also %s: one secret would be both %s and %s, so whoever is given it for one could use it as the other; give each setting a variable of its own, holding a different value",
		u.Field, u.Env, prev.Field, prev.what(), u.what())
}

// where says where provider u's key is sent: its type and host.
func (u SecretUse) where() string {
	host := u.Host
	if host == "" {
		host = "no host (its base_url is missing or not a URL)"
	}
	return fmt.Sprintf("type %s at %s", u.Type, host)
}

// what says what u's secret is and who is given it.
func (u SecretUse) what() string {
	switch u.Role {
	case OpsKey:
		return "the operator key (it opens the operator surface, which shows every owner's jobs)"
	case TenantKey:
		return fmt.Sprintf("owner %s's API key (it calls the API as %s)", u.Owner, u.Owner)
	case WebhookSecret:
		return fmt.Sprintf("the signing secret of owner %s's webhook (given to its receiver, to check the events' signatures)", u.Owner)
	}
	return fmt.Sprintf("provider %s's API key (sent to that provider with every request, and billed to your account there)", u.Name)
}
