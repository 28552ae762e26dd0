package config

import (
	"slices"
	"strings"
	"testing"
)

// A route mixing priced and unpriced targets is named at start, with the
// unpriced targets and where to price each: a job that used one of them has
// no cost_usd (a sum of its priced attempts alone would read as if the
// unpriced ones were free). A route with no priced target, or with every
// target priced (a target's price given by another route counts), is not
// named. Found by review.
func TestPriceMixWarningsNameMixedRoutes(t *testing.T) {
	c, err := Parse([]byte(`database_url: postgres://unused
providers:
  - {name: paid, type: scripted, model: m1, price: {input_per_mtok: 1, output_per_mtok: 10}}
  - {name: free, type: scripted, model: m2}
  - {name: other, type: scripted, model: m3}
routes:
  mixed:
    targets:
      - {provider: paid}
      - {provider: free}
      - {provider: paid, model: big}
      - {provider: other, model: m4}
  unpriced:
    targets:
      - {provider: free}
      - {provider: other}
  priced:
    targets:
      - {provider: paid}
      - {provider: other, model: m4, price: {input_per_mtok: 2, output_per_mtok: 4}}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"route mixed mixes priced targets (paid, other/m4) with targets that have no price (free, paid/big): " +
		"a job with an attempt on an unpriced target shows no cost_usd (nor lost_cost_usd when that attempt did not win), " +
		"and router_cost_usd_total counts nothing for it; set price: {input_per_mtok: …, output_per_mtok: …} (USD per million tokens; 0 is a price) — " +
		"providers[1].price for free; price on the route target {provider: paid, model: big} for paid/big"}
	if got := c.PriceMixWarnings(); !slices.Equal(got, want) {
		t.Errorf("warnings:\n%q\nwant\n%q", got, want)
	}
	var logged int
	for _, w := range c.Warnings() {
		if strings.HasPrefix(w, "route mixed mixes priced targets") {
			logged++
		}
	}
	if logged != 1 {
		t.Errorf("Warnings (logged at start) name the mixed route %d times, want once: %q", logged, c.Warnings())
	}
}
