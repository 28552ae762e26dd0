package server

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
)

// A tenant key with a control character inside (a byte pasted from a
// terminal, a NUL) could never be presented in an Authorization header, as
// one with white space could not: the router refuses to start, naming the
// setting and the variable, never the key. It refused only white space.
func TestStaticKeysRefuseAControlCharacterInside(t *testing.T) {
	t.Setenv("CTRL_KEY_ACME", "rk_abc\x01def")
	cfg := &config.Config{APIKeys: []config.APIKey{{Owner: "acme", KeyEnv: "CTRL_KEY_ACME"}}}
	_, err := staticKeys(cfg)
	if err == nil || !strings.Contains(err.Error(), "api_keys[0].key_env: environment variable CTRL_KEY_ACME (owner acme) holds white space or a control character inside the key") {
		t.Fatalf("a key with a control character inside: %v", err)
	}
	if strings.Contains(err.Error(), "rk_abc") {
		t.Fatalf("the refusal repeats the key: %v", err)
	}
}
