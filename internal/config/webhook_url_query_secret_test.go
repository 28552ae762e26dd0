package config

import (
	"strings"
	"testing"
)

// A webhook URL often carries its receiver's secret in the query
// (?token=…, ?code=… for Azure Functions, ?sig=… for a SAS URL). A URL
// refused at load (a port out of range, a fragment, a stray space) is
// was repeated whole in the refusal, query value included, which start-up
// prints and logs: u.Redacted() hides a password only. Refusals hide such
// query values now, as base_url's do (netredact.URL,
// TestBaseURLQuerySecretIsNotRepeated); `router keys create --webhook-url`
// uses the same check. Found by review.
func TestWebhookURLRefusalDoesNotRepeatQuerySecret(t *testing.T) {
	const secret = "s3cr3t-receiver-token-0123"
	for _, raw := range []string{
		"https://hooks.example.com:99999/hook?token=" + secret,    // port out of range
		"https://hooks.example.com/hook?code=" + secret + "#part", // fragment
		"https://hooks.example.com/hook?sig=" + secret + "\n",     // a newline pasted with it
		"https://hooks.example.com/my hook?token=" + secret,       // white space inside
		"ftp://hooks.example.com/hook?token=" + secret,            // scheme
	} {
		err := ValidateWebhookURL(raw)
		if err == nil {
			t.Fatalf("%q accepted", raw)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the refusal of %q repeats the query's secret: %v", raw, err)
		}
	}
	t.Setenv("DATABASE_URL", "")
	y := "api_keys:\n  - {owner: acme, key_env: ACME_KEY, webhook: {url: \"https://hooks.example.com:99999/hook?token=" + secret + "\", secret_env: ACME_HOOK}}\n" +
		"providers:\n  - {name: a, type: scripted}\nroutes:\n  r: {providers: [a]}\n"
	if _, err := Parse([]byte(y)); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("load: %v", err)
	}
}
