package config

import (
	"strings"
	"testing"
)

// A secret pasted where the name of its environment variable belongs passed
// the load, and start-up then printed it ("environment variable sk-… is
// empty"). Every *_env that is not a variable name is refused, and no message
// repeats it.
func TestEnvSettingsMustBeNamesAndAreNeverEchoed(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	const secret = "sk-proj-Zm9vYmFyYmF6cXV4"
	y := `
ops_listen: 0.0.0.0:9090
ops_key_env: ` + secret + `1
api_keys:
  - {owner: a, key_env: ` + secret + `2, webhook: {url: "https://x.example/h", secret_env: "whsec_` + secret + `3"}}
  - {owner: b, key_env: ` + secret + `2}
providers:
  - {name: p, type: openai, base_url: "https://x.example/v1", model: m, api_key_env: "` + secret + `4"}
`
	_, err := Parse([]byte(y))
	if err == nil {
		t.Fatal("secrets in *_env accepted")
	}
	for _, want := range []string{"ops_key_env is not the name of an environment variable", "api_keys[0].key_env is not the name",
		"api_keys[1].key_env is not the name", "api_keys[0].webhook.secret_env is not the name", "providers[0] (p).api_key_env is not the name"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("the message repeats the secret:\n%v", err)
	}
	if _, err := Parse([]byte("ops_key_env: _Ops_Key2\napi_keys:\n  - {owner: a, key_env: ACME_API_KEY}\n")); err != nil {
		t.Fatalf("good names: %v", err)
	}
}

// A webhook URL with a password was refused with the whole URL in the
// message; the password is redacted now (url.Parse errors too repeat it).
func TestWebhookURLMessagesRedactPasswords(t *testing.T) {
	for _, raw := range []string{"https://user:hunter2@x.example/h", "ftp://user:hunter2@x.example/h", "https://user:hunter2@x.example:port/h"} {
		err := ValidateWebhookURL(raw)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: %v", raw, err)
		}
	}
}
