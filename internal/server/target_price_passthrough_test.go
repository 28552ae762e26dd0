package server

import (
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/race"
)

// A provider that names no model of its own prices every model it serves
// (config: its price is every target's), so a model passed through it (a
// route's models, a prompt's model) that no target configures is priced too.
// It was unpriced: no cost_usd, though the operator had priced the provider.
// A provider naming its own model still prices only that model.
func TestPassedThroughModelOfAProviderWithoutOwnModelIsPriced(t *testing.T) {
	cfg, err := config.Parse([]byte(`database_url: postgres://unused
providers:
  - {name: gw, type: openai, base_url: "http://gw.internal/v1", price: {input_per_mtok: 1, output_per_mtok: 2}}
  - {name: openai, type: openai, base_url: "http://oai.internal/v1", model: gpt-4o-mini, price: {input_per_mtok: 0.15, output_per_mtok: 0.60}}
routes:
  default:
    models: [llama-3-70b]
    targets:
      - {provider: gw, model: mixtral}
      - {provider: openai}
`))
	if err != nil {
		t.Fatal(err)
	}
	targets := ConfiguredTargets(cfg)
	gw := race.TargetFor(targets, "gw/mixtral", targets["gw/mixtral"], "llama-3-70b")
	if p := gw.Price; p == nil || p.InputPerMTok != 1 || p.OutputPerMTok != 2 {
		t.Errorf("llama-3-70b through gw (no model of its own): price %+v, want the provider's 1/2", p)
	}
	oai := race.TargetFor(targets, "openai", targets["openai"], "llama-3-70b")
	if oai.Price != nil {
		t.Errorf("llama-3-70b through openai (whose price is gpt-4o-mini's): price %+v, want none", oai.Price)
	}
}
