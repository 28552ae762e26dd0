package config

import (
	"strings"
	"testing"
)

// A price far beyond any model's (a stray exponent, 1e308) was accepted, and
// the attempts it priced had a cost the database could not read back as
// float8: the job became unreadable. Prices are bounded now, each key named.
// Found by review.
func TestPriceAboveTheBoundIsRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, `
providers:
  - {name: p, type: scripted, price: {input_per_mtok: 1e308, output_per_mtok: 15}}
routes:
  r: {targets: [{provider: p}, {provider: p, model: m2, price: {input_per_mtok: 1, output_per_mtok: 1000001}}]}
`,
		"providers[0] (p).price.input_per_mtok (1e+308) is above 1000000",
		"routes.r.targets[1].price.output_per_mtok (1.000001e+06) is above 1000000",
		"USD per million tokens")
	c, err := Parse([]byte(`
providers:
  - {name: p, type: scripted, price: {input_per_mtok: 1000000, output_per_mtok: 0}}
routes:
  r: {providers: [p]}
`))
	if err != nil {
		t.Fatalf("a price at the bound is refused: %v", err)
	}
	if pr := c.Providers[0].Price; pr == nil || pr.InputPerMTok != MaxPricePerMTok || pr.OutputPerMTok != 0 {
		t.Fatalf("price %+v", pr)
	}
}

// A price that left a key out decoded it as 0: `price: {input_per_mtok: 3}`
// priced every output token at nothing, and `price: {}` priced the target
// at nothing at all, without a word. Both keys are required now (0 written
// is a price), naming the key and the provider or target. Found by review.
func TestPriceNeedsBothKeys(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, `
providers:
  - {name: p, type: scripted, price: {input_per_mtok: 3}}
  - {name: q, type: scripted, price: {}}
routes:
  r: {targets: [{provider: p, model: m2, price: {output_per_mtok: 0}}, {provider: q}]}
`,
		"line 3: providers[0] (p).price: output_per_mtok left out",
		"line 4: providers[1] (q).price: input_per_mtok and output_per_mtok left out",
		"line 6: routes.r.targets[0].price: input_per_mtok left out",
		"write 0 for tokens that cost nothing")

	// Zeros written, a price brought in by an anchor or a merge key, and a
	// price left empty (no price) are all fine.
	c, err := Parse([]byte(`
providers:
  - {name: p, type: scripted, price: &free {input_per_mtok: 0, output_per_mtok: 0}}
  - {name: q, type: scripted, price: {<<: *free, output_per_mtok: 2}}
  - {name: u, type: scripted, price: ~}
routes:
  r: {targets: [{provider: p, price: *free}, {provider: q}, {provider: u}]}
`))
	if err != nil {
		t.Fatalf("complete prices refused: %v", err)
	}
	if c.Providers[1].Price.OutputPerMTok != 2 || c.Providers[2].Price != nil {
		t.Fatalf("prices %+v %+v", c.Providers[1].Price, c.Providers[2].Price)
	}

	// A key written with the wrong type is named once, as such, not as left
	// out too.
	_, err = Parse([]byte("providers:\n  - {name: p, type: scripted, price: {input_per_mtok: cheap, output_per_mtok: 1}}\n"))
	if err == nil || strings.Contains(err.Error(), "left out") || !strings.Contains(err.Error(), `price.input_per_mtok: "cheap" is not a number`) {
		t.Fatalf("%v", err)
	}
}
