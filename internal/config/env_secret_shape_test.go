package config

import (
	"crypto/rand"
	"strings"
	"testing"
)

// A router API key ("rk_" and base32 capitals and digits) or a Groq key
// ("gsk_" and letters and digits) is shaped like a variable name, so pasted
// into a *_env it passed the load; `router serve` then printed it
// ("environment variable rk_Q3JK… (owner acme) is empty"). Found by review.
func TestPastedRouterKeyRefusedAtLoad(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	routerKey := "rk_" + rand.Text()
	groqKey := "gsk_" + strings.Repeat("aB3dE6gH9k", 5) + "Zz"
	doc := "providers:\n  - {name: g, type: openai, base_url: 'https://api.groq.com/openai/v1', model: m, api_key_env: " + groqKey + "}\n" +
		"routes: {default: {providers: [g]}}\n" +
		"api_keys: [{owner: acme, key_env: " + routerKey + "}]\n"
	_, err := Parse([]byte(doc))
	if err == nil {
		t.Fatalf("key_env: %s (a router API key) and api_key_env: %s (a Groq key) accepted as variable names", routerKey, groqKey)
	}
	if strings.Contains(err.Error(), routerKey) || strings.Contains(err.Error(), groqKey) {
		t.Errorf("the refusal repeats the secret: %v", err)
	}
	for _, want := range []string{"api_keys[0].key_env has the shape of a secret", "providers[0] (g).api_key_env has the shape of a secret"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
}

// The shapes refused, and the names kept: conventional names, short mixed
// ones, and a router key's prefix on a name that is not a key.
func TestSecretShapedNames(t *testing.T) {
	for _, s := range []string{
		"rk_" + rand.Text(),
		"rk_ABCDEFGHIJKLMNOPQRSTUVWXYZ", // a router key without a digit (one in about 200)
		"gsk_" + strings.Repeat("aB3dE6gH9k", 5) + "Zz",
		"hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
		"xai_abcdefghijklmnopqrstuvwxyz",
		"sk_live_51HabcdEFGHijklMNOP",
		"ghp_0123456789abcdefABCDEF0123456789abcd",
		"AKIA2OGYBAH6QPLWRGB5",                    // an AWS access key id
		"AKIAIOSFODNN7EXAMPLE",                    // AWS's documentation's: by its prefix
		"ACME_Xk29fPq8LmN3vB7wQ",                  // a random run after a name
		"AIzaSyDaGmWKa4JsXZHjGw7ISLn4namRsO1RYtu", // a Google API key
		"5f4dcc3b5aa765d61d8327deb882cf99aa",      // hex, though it starts with a digit (isEnvName refuses that already)
		"a5f4dcc3b5aa765d61d8327deb882cf99",       // hex
	} {
		if !secretShaped(s) {
			t.Errorf("%s: not taken for a secret", s)
		}
		if ShowEnvName(s) || strings.Contains(EnvRef(s), s) {
			t.Errorf("%s: a start-up message would show it: %s", s, EnvRef(s))
		}
	}
	for _, s := range []string{
		"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ACME_KEY_2", "GROQ_API_KEY", "HF_TOKEN", "ROUTER_OPS_KEY",
		"AZURE_OPENAI_KEY_EASTUS2", "CONFORMANCE_ANTHROPIC_KEY", "_Ops_Key2", "rk_ACME", "RK_ACME_PROD",
		"TENANT_KEY_20260101", "SK_PROD", "Acme_Api_Key", "ACME2024PRODUCTIONKEY", "Acme2024ProductionKey",
		"KEY_0123456789ABCDEF", // few changes between letters and digits
		// AWS's key prefixes starting a region's name (a prefix check
		// alone refused them; review)
		"MyCompanyOpenAIKey2024", "AcmeProdOpenAIKey2", // CamelCase words, a year
		"ASIA_PACIFIC_API_KEY", "ASIA_SOUTHEAST1_OPENAI_KEY", "ASIAPAC_GROQ_API_KEY", "AKIA_PROXY_TOKEN_0001",
	} {
		if secretShaped(s) {
			t.Errorf("%s: taken for a secret", s)
		}
	}
	for _, s := range []string{"OPENAI_API_KEY", "ACME_KEY_2", "RK_ACME_PROD"} {
		if !ShowEnvName(s) || EnvRef(s) != "environment variable "+s {
			t.Errorf("%s: not shown: %s", s, EnvRef(s))
		}
	}
	// Unconventional names are not shown either: lower case, too long.
	for _, s := range []string{"openai_key", "_KEY", "Acme_Api_Key", strings.Repeat("K", 65)} {
		if ShowEnvName(s) {
			t.Errorf("%s: shown", s)
		}
	}
}
