package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
)

const otherModelConfig = `database_url: postgres://unused
providers:
  - {name: openai, type: scripted, model: gpt-4o-mini, price: {input_per_mtok: 0.15, output_per_mtok: 0.60}}
routes:
  default:
    targets:
      - {provider: openai, model: gpt-4o}
      - {provider: openai}
`

// A provider's price is its own model's: a route target of another model of
// the provider, without a price of its own, is unpriced (cost null), never
// charged the provider's model's price. Found by review.
func TestProviderPriceIsOnlyForItsOwnModel(t *testing.T) {
	cfg, err := config.Parse([]byte(otherModelConfig))
	if err != nil {
		t.Fatal(err)
	}
	targets, err := BuildTargets(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p := targets["openai/gpt-4o"].Price; p != nil {
		t.Errorf("target openai/gpt-4o: price %+v, want none (the provider's is gpt-4o-mini's)", p)
	}
	if p := targets["openai"].Price; p == nil || p.InputPerMTok != 0.15 || p.OutputPerMTok != 0.60 {
		t.Errorf("target openai: price %+v, want the provider's 0.15/0.60", p)
	}
	// Naming the provider's own model on the target is the same target.
	cfg, err = config.Parse([]byte(strings.Replace(otherModelConfig, "{provider: openai}", "{provider: openai, model: gpt-4o-mini}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if targets, err = BuildTargets(cfg); err != nil {
		t.Fatal(err)
	}
	if p := targets["openai"].Price; p == nil || p.InputPerMTok != 0.15 {
		t.Errorf("target openai (model named): price %+v, want the provider's 0.15/0.60", p)
	}
}

// The server says at start which targets are unpriced only because their
// provider's price is another model's.
func TestUnpricedTargetOfPricedProviderIsWarned(t *testing.T) {
	cfg, err := config.Parse([]byte(otherModelConfig))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	logTargetWarnings(cfg, slog.New(slog.NewTextHandler(&buf, nil)))
	// The route mixing a priced and an unpriced target is named too: its
	// jobs show no cost_usd (config.PriceMixWarnings).
	want := "target openai/gpt-4o has no price (the provider's price is for gpt-4o-mini): set price on the target"
	mix := "route default mixes priced targets (openai) with targets that have no price (openai/gpt-4o)"
	if out := buf.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, want) || !strings.Contains(out, mix) ||
		strings.Count(out, "\n") != 2 {
		t.Errorf("warnings logged:\n%s\nwant two: %s, and %s", out, want, mix)
	}
	// Priced on the target (in any route): nothing to say.
	cfg, err = config.Parse([]byte(otherModelConfig + `  other:
    targets: [{provider: openai, model: gpt-4o, price: {input_per_mtok: 2.5, output_per_mtok: 10}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	logTargetWarnings(cfg, slog.New(slog.NewTextHandler(&buf, nil)))
	if buf.Len() != 0 {
		t.Errorf("a priced target warned: %s", buf.String())
	}
}
