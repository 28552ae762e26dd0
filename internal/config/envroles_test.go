package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// One environment variable named by two *_env settings whose secrets go to
// different parties was accepted (only ops_key_env = key_env, and one key_env
// twice, were refused): a webhook's receiver given the operator key or
// another owner's key, a tenant given the router's provider key, two owners'
// receivers able to sign each other's events. Found by review.
func TestSecretVariableSharedAcrossTrustBoundariesRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	const base = `
providers:
  - {name: a, type: openai, base_url: "https://api.openai.com/v1", api_key_env: OPENAI_API_KEY, model: m}
routes: {r: {providers: [a]}}
`
	for name, c := range map[string]struct {
		yaml  string
		wants []string
	}{
		"webhook secret_env is ops_key_env": {base + `ops_key_env: OPS_KEY
api_keys: [{owner: acme, key_env: ACME_KEY, webhook: {url: "https://hooks.acme.example/h", secret_env: OPS_KEY}}]
`, []string{"api_keys[0].webhook.secret_env: OPS_KEY is also ops_key_env", "the operator key", "owner acme's webhook", "a variable of its own"}},
		"webhook secret_env is another owner's key_env": {base + `api_keys:
  - {owner: acme, key_env: ACME_KEY, webhook: {url: "https://hooks.acme.example/h", secret_env: GLOBEX_KEY}}
  - {owner: globex, key_env: GLOBEX_KEY}
`, []string{"api_keys[1].key_env: GLOBEX_KEY is also api_keys[0].webhook.secret_env", "owner globex's API key", "a variable of its own"}},
		"webhook secret_env is a provider's api_key_env": {base + `api_keys: [{owner: acme, key_env: ACME_KEY, webhook: {url: "https://hooks.acme.example/h", secret_env: OPENAI_API_KEY}}]
`, []string{"providers[0] (a).api_key_env: OPENAI_API_KEY is also api_keys[0].webhook.secret_env", "provider a's API key"}},
		"key_env is a provider's api_key_env": {base + `api_keys: [{owner: acme, key_env: OPENAI_API_KEY}]
`, []string{"providers[0] (a).api_key_env: OPENAI_API_KEY is also api_keys[0].key_env", "owner acme's API key"}},
		"ops_key_env is a provider's api_key_env": {base + `ops_key_env: OPENAI_API_KEY
`, []string{"providers[0] (a).api_key_env: OPENAI_API_KEY is also ops_key_env"}},
		"two owners' webhooks share secret_env": {base + `api_keys:
  - {owner: acme, key_env: ACME_KEY, webhook: {url: "https://hooks.acme.example/h", secret_env: HOOK_SECRET}}
  - {owner: globex, key_env: GLOBEX_KEY, webhook: {url: "https://hooks.globex.example/h", secret_env: HOOK_SECRET}}
`, []string{"api_keys[1].webhook.secret_env: HOOK_SECRET is also api_keys[0].webhook.secret_env (owner acme), whose webhook goes to another url", "give them the same url"}},
		"one owner's previous secret is another's secret": {base + `api_keys:
  - {owner: acme, key_env: ACME_KEY, webhook: {url: "https://hooks.acme.example/h", secret_env: ACME_HOOK}}
  - {owner: globex, key_env: GLOBEX_KEY, webhook: {url: "https://hooks.globex.example/h", secret_env: GLOBEX_HOOK, previous_secret_env: ACME_HOOK}}
`, []string{"api_keys[1].webhook.previous_secret_env: ACME_HOOK is also api_keys[0].webhook.secret_env (owner acme)"}},
		// One owner, but the receiver is given the secret to check
		// signatures: it needs no key that calls the API as the owner.
		"an owner's webhook secret_env is its own key_env": {base + `api_keys: [{owner: acme, key_env: ACME_KEY, webhook: {url: "https://hooks.acme.example/h", secret_env: ACME_KEY}}]
`, []string{"api_keys[0].webhook.secret_env: ACME_KEY is also api_keys[0].key_env", "owner acme's API key"}},
	} {
		_, err := Parse([]byte(c.yaml))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		for _, want := range c.wants {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the error does not say %q:\n%v", name, want, err)
			}
		}
	}
}

// The sharing that stays within one party is accepted.
func TestSecretVariableSharedWithinOneParty(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for name, y := range map[string]string{
		"two providers on one account's key": `
providers:
  - {name: fast, type: openai, base_url: "https://api.openai.com/v1", api_key_env: OPENAI_API_KEY, model: gpt-4o-mini}
  - {name: slow, type: openai, base_url: "https://api.openai.com/v1", api_key_env: OPENAI_API_KEY, model: gpt-4o, stream: false}
routes: {r: {providers: [fast, slow]}}
`,
		"one owner's two keys carry its one webhook, during a rotation": `
api_keys:
  - {owner: acme, key_env: ACME_KEY, webhook: {url: "https://hooks.acme.example/h", secret_env: ACME_HOOK, previous_secret_env: ACME_HOOK_OLD}}
  - {owner: acme, key_env: ACME_KEY_2, webhook: {url: "https://hooks.acme.example/h", secret_env: ACME_HOOK, previous_secret_env: ACME_HOOK_OLD}}
`,
		// A scripted provider reads no key: its api_key_env is no secret
		// of anyone's (the start-time value check skips it too).
		"a scripted provider's unread api_key_env is a tenant's key_env": `
providers:
  - {name: s, type: scripted, api_key_env: ACME_KEY}
routes: {r: {providers: [s]}}
api_keys: [{owner: acme, key_env: ACME_KEY}]
`,
		"two owners' webhooks go to one receiver": `
api_keys:
  - {owner: acme, key_env: ACME_KEY, webhook: {url: "https://hooks.example.com/h", secret_env: HOOK_SECRET}}
  - {owner: globex, key_env: GLOBEX_KEY, webhook: {url: "https://hooks.example.com/h", secret_env: HOOK_SECRET}}
`,
	} {
		if _, err := Parse([]byte(y)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Every *_env setting of the configuration has a role in the check above: a
// new one left out of SecretUses could name any other's variable.
func TestEveryEnvSettingHasARole(t *testing.T) {
	var tags []string
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if tag := strings.Split(f.Tag.Get("yaml"), ",")[0]; strings.HasSuffix(tag, "_env") {
				tags = append(tags, tag)
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeOf(Config{}))
	c := Config{OpsKeyEnv: "A", APIKeys: []APIKey{{Owner: "o", KeyEnv: "B", Webhook: &Webhook{SecretEnv: "C", PreviousSecretEnv: "D"}}},
		Providers: []Provider{{Name: "p", APIKeyEnv: "E"}}}
	var covered []string
	for _, u := range c.SecretUses() {
		covered = append(covered, u.Field[strings.LastIndexAny(u.Field, ".")+1:])
	}
	slices.Sort(tags)
	slices.Sort(covered)
	if !slices.Equal(tags, covered) {
		t.Fatalf("the *_env settings are %v, SecretUses covers %v: give the new one a role", tags, covered)
	}
}
