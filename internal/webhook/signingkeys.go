package webhook

import (
	"crypto/sha256"
	"time"
)

// signingKeys are the secrets a delivery to owner is signed with: the
// owner's current secret and, during a rotation, the previous one. stored:
// a stored key's webhook (router keys create --webhook-url; the previous
// secret kept by router keys rotate-webhook-secret), not a configured one
// (api_keys[].webhook.secret_env and previous_secret_env).
type signingKeys struct {
	owner            string
	secret, previous string
	stored           bool
}

// signature is the webhook-signature value of one try: the current secret's
// signature, then the previous secret's (Standard Webhooks: space-separated,
// any may match). A current secret that cannot sign fails the try. A
// previous secret that cannot sign does not: the try is sent with the
// current secret's signature alone, which a receiver that already verifies
// with the current secret accepts, and warnUnusablePrevious says what to
// fix. The router never makes such a previous secret (a rotation keeps the
// secret that was signing, and `router serve` checks a configured one at
// start); only a hand-edited row or variable does, and it failed every
// delivery to the owner.
func (w *Worker) signature(keys signingKeys, id string, ts time.Time, body []byte) (string, error) {
	sig, err := Sign(keys.secret, id, ts, body)
	if err != nil {
		return "", err
	}
	if keys.previous == "" {
		return sig, nil
	}
	old, err := Sign(keys.previous, id, ts, body)
	if err != nil {
		w.warnUnusablePrevious(keys, err)
		return sig, nil
	}
	return sig + " " + old, nil
}

// warnUnusablePrevious logs, at warn and once per owner and previous secret
// on this replica (not on every try), that the owner's previous secret
// cannot sign, with what to fix. The log holds neither secret.
func (w *Worker) warnUnusablePrevious(keys signingKeys, err error) {
	sum := sha256.Sum256([]byte(keys.previous))
	if _, seen := w.unusablePrevious.LoadOrStore(keys.owner+"\x00"+string(sum[:]), true); seen {
		return
	}
	fix := "the variable named by api_keys[].webhook.previous_secret_env holds no usable secret: " +
		"remove previous_secret_env (or set the variable to the secret that was signing before the rotation) and restart the replicas"
	if keys.stored {
		fix = "the stored previous secret (api_keys.webhook_previous_secret and webhook_owners.previous_secret, " +
			"kept by router keys rotate-webhook-secret) is not one the router made: it was changed by hand. " +
			"End the overlap: UPDATE api_keys SET webhook_previous_secret = NULL, webhook_previous_until = NULL WHERE owner = '<owner>'; " +
			"UPDATE webhook_owners SET previous_secret = NULL, previous_until = NULL WHERE owner = '<owner>'"
	}
	w.log.Warn("webhook previous secret cannot sign: deliveries to the owner carry the current secret's signature alone, "+
		"so a receiver still verifying with the previous secret refuses them; "+fix,
		"owner", keys.owner, "error", err.Error())
}
