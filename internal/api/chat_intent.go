package api

import (
	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/store"
)

// chatIntent is what a chat call's job stores: its input, in the stored form
// (chat.Input.StoredJSON: the caller's schemas and tools as their text, which
// jsonb keeps byte for byte, so that every round of the job sends what the
// first sent), and its fingerprint, of the intent in the object form
// (chat.IntentValue) — the fingerprint replicas that stored the object form
// computed, so that a keyed resend across an upgrade still finds its job.
func chatIntent(in *chat.Input, op, route string) (input, fp []byte, err error) {
	input, err = in.StoredJSON()
	if err != nil {
		return nil, nil, err
	}
	v, err := chat.IntentValue(input)
	if err != nil {
		return nil, nil, err
	}
	fp, err = store.FingerprintValue(op, "", route, v)
	return input, fp, err
}
