package api_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/routerhq/router/internal/api"
)

// An unknown token (a prober's, or a typo) is compared with every configured
// key before its 401: with the keys' digests computed once, it costs one hash
// and len(keys) constant-time comparisons, not len(keys) hashes.
func BenchmarkKeyAuthUnknownKey(b *testing.B) {
	keys := map[string]string{}
	for i := range 500 {
		keys[fmt.Sprintf("configured-key-%04d-%s", i, "0123456789abcdef0123456789abcdef")] = "acme"
	}
	a := &api.KeyAuth{Static: keys}
	ctx := context.Background()
	for b.Loop() {
		if _, ok, err := a.Owner(ctx, "not-a-configured-key"); ok || err != nil {
			b.Fatalf("an unknown key: ok=%v err=%v", ok, err)
		}
	}
}
