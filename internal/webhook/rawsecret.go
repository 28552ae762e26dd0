package webhook

import (
	"log/slog"
	"slices"
	"strings"
)

// rawSecretHelp says how a receiver verifies with a secret that has no whsec_
// prefix. The router signs with such a secret's bytes as given (secretKey);
// Standard Webhooks libraries, handed a string, base64-decode it (after
// dropping a whsec_ prefix) and so compute a different key: every delivery
// fails their verification, though the router accepted the secret.
const rawSecretHelp = "a receiver using a Standard Webhooks library must give it the secret as raw bytes — " +
	`Go standardwebhooks.NewWebhookRaw([]byte(secret)), JavaScript new Webhook(secret, {format: "raw"}), ` +
	"Python Webhook(secret.encode()) — since the libraries base64-decode a secret given as a string, and then " +
	"every verification fails; or use a whsec_ secret instead: " + secretHelp

// warnRawSecrets logs, once per configured owner, that its webhook's secret
// (or previous secret, during a rotation) has no whsec_ prefix: allowed, but
// a receiver's library verifies such a secret only when told it is raw.
func warnRawSecrets(log *slog.Logger, secrets, previous map[string]string) {
	for _, set := range []struct {
		which   string
		secrets map[string]string
	}{{"secret_env", secrets}, {"previous_secret_env", previous}} {
		owners := make([]string, 0, len(set.secrets))
		for owner, s := range set.secrets {
			if s != "" && !strings.HasPrefix(s, "whsec_") {
				owners = append(owners, owner)
			}
		}
		slices.Sort(owners)
		for _, owner := range owners {
			log.Warn("webhook secret has no whsec_ prefix: deliveries are signed with its bytes as given; "+rawSecretHelp,
				"owner", owner, "variable", "api_keys[].webhook."+set.which)
		}
	}
}
