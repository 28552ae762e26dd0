package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/server"
)

// The configuration's scripted providers are told each other's names, so a
// `#scripted@<name>:` directive addressed to a provider the configuration
// does not have (a typo) is refused, naming those it has, instead of being
// ignored by all of them (providers.ScriptedConfig.Peers).
func TestConfiguredScriptedProvidersRefuseDirectiveToUnknownName(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	cfg, err := config.Parse([]byte(`providers:
  - {name: g-primary, type: scripted}
  - {name: g-fallback, type: scripted}
routes:
  default: {providers: [g-primary, g-fallback]}
`))
	if err != nil {
		t.Fatal(err)
	}
	targets, err := server.BuildTargets(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := &providers.Request{AttemptID: "a", JobID: "j", Messages: []providers.Message{{Role: "user", Content: "b\n#scripted@nosuch: status=503"}}}
	for _, id := range []string{"g-primary", "g-fallback"} {
		_, err := targets[id].Provider.Complete(context.Background(), req)
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.Kind != providers.KindBadRequest || !strings.Contains(pe.Message, "g-primary, g-fallback") {
			t.Errorf("%s: %v, want a bad request naming the scripted providers", id, err)
		}
	}
}
