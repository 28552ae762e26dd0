package config

import "fmt"

// secretRole is what the secret in a *_env variable is for, which decides who
// is given it.
type secretRole int

const (
	opsKey        secretRole = iota // ops_key_env: the operators
	tenantKey                       // api_keys[].key_env: the owner's API clients
	webhookSecret                   // api_keys[].webhook.(previous_)secret_env: the receiver at the webhook's url
	providerKey                     // providers[].api_key_env: the router, and the provider it is sent to
)

// envUse is one *_env setting and the variable it names.
type envUse struct {
	field string // the setting, as messages name it
	env   string
	role  secretRole
	owner string // tenantKey and webhookSecret: the api_keys entry's owner
	url   string // webhookSecret: the receiver
	name  string // providerKey: the provider
	entry int    // tenantKey: the api_keys index
}

// envUses is every *_env setting that names a variable, in file order. A new
// *_env setting belongs here (TestEveryEnvSettingHasARole checks), and in
// envNameProblems.
func (c Config) envUses() []envUse {
	var uses []envUse
	use := func(u envUse) {
		if u.env != "" && isEnvName(u.env) { // not a name: envNameProblems, never echoed
			uses = append(uses, u)
		}
	}
	use(envUse{field: "ops_key_env", env: c.OpsKeyEnv, role: opsKey})
	for i, k := range c.APIKeys {
		use(envUse{field: fmt.Sprintf("api_keys[%d].key_env", i), env: k.KeyEnv, role: tenantKey, owner: k.Owner, entry: i})
		if h := k.Webhook; h != nil {
			use(envUse{field: fmt.Sprintf("api_keys[%d].webhook.secret_env", i), env: h.SecretEnv, role: webhookSecret, owner: k.Owner, url: h.URL})
			use(envUse{field: fmt.Sprintf("api_keys[%d].webhook.previous_secret_env", i), env: h.PreviousSecretEnv, role: webhookSecret, owner: k.Owner, url: h.URL})
		}
	}
	for i, p := range c.Providers {
		use(envUse{field: fmt.Sprintf("providers[%d] (%s).api_key_env", i, p.Name), env: p.APIKeyEnv, role: providerKey, name: p.Name})
	}
	return uses
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
	first := map[string][]envUse{} // variable → its earlier uses
	for _, u := range c.envUses() {
		for _, prev := range first[u.env] {
			if msg := secretShareProblem(prev, u); msg != "" {
				errs = append(errs, msg)
				break // one message per setting
			}
		}
		first[u.env] = append(first[u.env], u)
	}
	return errs
}

// secretShareProblem says why the later setting u cannot name the variable
// that the earlier setting prev names, or "" when the two secrets go to one
// party:
//   - two providers: one account's key, for several provider entries (other
//     models, deadlines or streaming, a second endpoint of the same vendor);
//   - the webhook of one owner, named in each of its entries (an owner's
//     entries must carry the same webhook), or as secret and previous secret
//     (refused, with its own message, by the rotation check);
//   - the webhooks of two owners with the same url: the one receiver holds
//     the secret either way.
func secretShareProblem(prev, u envUse) string {
	switch {
	case prev.role == providerKey && u.role == providerKey:
		return ""
	case prev.role == webhookSecret && u.role == webhookSecret:
		if prev.owner == u.owner || prev.url == u.url {
			return ""
		}
		return fmt.Sprintf("%s: %s is also %s (owner %s), whose webhook goes to another url: each receiver could sign events that the other accepts as the router's, about jobs that are not its owner's; "+
			"give each owner's webhook a variable of its own, holding a different secret (or, if both go to one receiver, give them the same url)", u.field, u.env, prev.field, prev.owner)
	case prev.role == opsKey && u.role == tenantKey:
		// Reported from ops_key_env, as before this check covered every pair.
		return fmt.Sprintf("ops_key_env: %s is also %s (owner %s): that tenant's key would open the operator surface, which shows every owner's jobs; give the operator key a variable and a value of its own", prev.env, u.field, u.owner)
	case prev.role == tenantKey && u.role == tenantKey:
		return fmt.Sprintf("%s: %s is also the key_env of api_keys[%d] (owner %s): one bearer key would authenticate as two entries; give each entry its own environment variable", u.field, u.env, prev.entry, prev.owner)
	}
	return fmt.Sprintf("%s: %s is also %s: one secret would be both %s and %s, so whoever is given it for one could use it as the other; give each setting a variable of its own, holding a different value",
		u.field, u.env, prev.field, prev.what(), u.what())
}

// what says what u's secret is and who is given it.
func (u envUse) what() string {
	switch u.role {
	case opsKey:
		return "the operator key (it opens the operator surface, which shows every owner's jobs)"
	case tenantKey:
		return fmt.Sprintf("owner %s's API key (it calls the API as %s)", u.owner, u.owner)
	case webhookSecret:
		return fmt.Sprintf("the signing secret of owner %s's webhook (given to its receiver, to check the events' signatures)", u.owner)
	}
	return fmt.Sprintf("provider %s's API key (sent to that provider with every request, and billed to your account there)", u.name)
}
