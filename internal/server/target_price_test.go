package server

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
)

// A route target's own price overrides its provider's (SPEC §18), also when
// the target is the provider's own model (listed first, unpriced, among the
// providers' targets); two routes pricing one target differently are
// refused, not settled by route name order. Found by review.
func TestRouteTargetPriceOverridesTheProvidersOwnModel(t *testing.T) {
	cfg, err := config.Parse([]byte(`database_url: postgres://unused
providers:
  - {name: s, type: scripted, model: m1, price: {input_per_mtok: 0.15, output_per_mtok: 0.60}}
  - {name: u, type: scripted, model: m2}
routes:
  default:
    targets:
      - {provider: s, price: {input_per_mtok: 5, output_per_mtok: 20}}
      - {provider: u, model: m2, price: {input_per_mtok: 1, output_per_mtok: 2}}
`))
	if err != nil {
		t.Fatal(err)
	}
	targets, err := BuildTargets(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p := targets["s"].Price; p == nil || p.InputPerMTok != 5 || p.OutputPerMTok != 20 {
		t.Errorf("target s: price %+v, want the route's 5/20", p)
	}
	if p := targets["u"].Price; p == nil || p.InputPerMTok != 1 || p.OutputPerMTok != 2 {
		t.Errorf("target u: price %+v, want the route's 1/2", p)
	}
	_, err = config.Parse([]byte(`database_url: postgres://unused
providers:
  - {name: s, type: scripted, model: m1}
routes:
  a: {targets: [{provider: s, model: big, price: {input_per_mtok: 1, output_per_mtok: 1}}]}
  b: {targets: [{provider: s, model: big, price: {input_per_mtok: 9, output_per_mtok: 9}}]}
  default: {targets: [{provider: s}]}
`))
	if err == nil || !strings.Contains(err.Error(), "target s/big has price 9/9") || !strings.Contains(err.Error(), "set it once") {
		t.Errorf("one target, two prices: %v", err)
	}
}
