package config

import (
	"strings"
	"testing"
)

// An owner with white space or control characters broke `router keys list`'s
// columns and reached metrics labels; a blank one made a nameless tenant.
// Found by review.
func TestOwnerNamesWithWhiteSpaceRefused(t *testing.T) {
	for _, owner := range []string{" ", "x\ty z", "acme ", "ac\u202eme", strings.Repeat("a", MaxOwnerLength+1)} {
		if err := ValidateOwner(owner); err == nil {
			t.Errorf("owner %q accepted", owner)
		}
	}
	for _, owner := range []string{"acme", "acme-eu", "team_42", "société"} {
		if err := ValidateOwner(owner); err != nil {
			t.Errorf("owner %q refused: %v", owner, err)
		}
	}
	_, err := Parse([]byte("api_keys:\n  - {owner: \"acme corp\", key_env: ACME_KEY}\nproviders:\n  - {name: p, type: scripted}\nroutes:\n  default: {providers: [p]}\n"))
	if err == nil || !strings.Contains(err.Error(), `api_keys[0].owner: the owner "acme corp" holds white space`) {
		t.Errorf("config owner with a space: %v", err)
	}
}
