package config

import (
	"slices"
	"testing"
)

// A provider's price is its own model's: another model's target without a
// price is unpriced, and PriceWarnings names it (the server logs them at
// start). Found by review.
func TestProviderPriceOnlyForItsOwnModel(t *testing.T) {
	c, err := Parse([]byte(`database_url: postgres://unused
providers:
  - {name: openai, type: scripted, model: gpt-4o-mini, price: {input_per_mtok: 0.15, output_per_mtok: 0.60}}
  - {name: s, type: scripted, price: {input_per_mtok: 1, output_per_mtok: 1}}
  - {name: free, type: scripted, model: m}
  - {name: nomodel, type: openai, base_url: "http://127.0.0.1:1/v1", api_key_env: NOMODEL_KEY, price: {input_per_mtok: 2, output_per_mtok: 8}}
routes:
  default:
    targets:
      - {provider: openai, model: gpt-4o}
      - {provider: openai, model: gpt-4o-mini}
      - {provider: openai, model: o1, price: {input_per_mtok: 15, output_per_mtok: 60}}
      - {provider: s}
      - {provider: s, model: other}
      - {provider: free, model: n}
      - {provider: nomodel, model: gpt-4o}
`))
	if err != nil {
		t.Fatal(err)
	}
	prices := map[string]*Price{}
	for _, rt := range c.AllTargets() {
		prices[rt.ID] = rt.PriceOrDefault()
	}
	for id, want := range map[string]*Price{
		"openai":        {0.15, 0.60}, // the provider's own model, named or not
		"openai/gpt-4o": nil,
		"openai/o1":     {15, 60},
		"s":             {1, 1},
		"s/other":       nil,
		"free/n":        nil,
		// A provider that names no model (its targets each name one):
		// its price is every target's, as before.
		"nomodel/gpt-4o": {2, 8},
	} {
		if got := prices[id]; (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("target %s: price %+v, want %+v", id, got, want)
		}
	}
	want := []string{
		"target openai/gpt-4o has no price (the provider's price is for gpt-4o-mini): set price on the target",
		"target s/other has no price (the provider's price is for scripted-s): set price on the target",
	}
	if got := c.PriceWarnings(); !slices.Equal(got, want) {
		t.Errorf("warnings:\n%q\nwant\n%q", got, want)
	}
}
