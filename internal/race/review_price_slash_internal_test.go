package race

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A provider's name may contain "/" (config refuses only ",", white space
// and control characters): a model passed through to target azure/eu is
// priced as provider azure/eu's target of that model, never provider
// azure's, whatever else is configured. Before, the provider was cut from
// the target's id at its first "/". Found by review.
func TestReviewPriceForProviderNameWithSlash(t *testing.T) {
	eu := &providers.Price{InputPerMTok: 0.165, OutputPerMTok: 0.66}
	us := &providers.Price{InputPerMTok: 0.15, OutputPerMTok: 0.6}
	euAdapter := providers.NewScripted(providers.ScriptedConfig{Name: "azure/eu", Model: "gpt-4o"})
	usAdapter := providers.NewScripted(providers.ScriptedConfig{Name: "azure", Model: "gpt-4o"})
	r := &Runner{cfg: Config{Targets: map[string]*Target{
		"azure/eu": {Provider: euAdapter, Model: "gpt-4o"}, "azure/eu/gpt-4o-mini": {Provider: euAdapter, Model: "gpt-4o-mini", Price: eu},
		"azure": {Provider: usAdapter, Model: "gpt-4o"}, "azure/gpt-4o-mini": {Provider: usAdapter, Model: "gpt-4o-mini", Price: us},
	}}}
	if got := r.priceFor("azure/eu", r.cfg.Targets["azure/eu"], "gpt-4o-mini"); got != eu {
		t.Errorf("gpt-4o-mini sent to target azure/eu is priced %+v, want azure/eu/gpt-4o-mini's %+v", got, eu)
	}
	delete(r.cfg.Targets, "azure/gpt-4o-mini")
	delete(r.cfg.Targets, "azure")
	if got := r.priceFor("azure/eu", r.cfg.Targets["azure/eu"], "gpt-4o-mini"); got != eu {
		t.Errorf("with provider azure/eu alone: priced %+v, want %+v", got, eu)
	}
	// A target of provider azure/eu serving another model than the
	// provider's finds the provider's own for it.
	r.cfg.Targets["azure/eu"].Price = us
	if got := r.priceFor("azure/eu/gpt-4o-mini", r.cfg.Targets["azure/eu/gpt-4o-mini"], "gpt-4o"); got != us {
		t.Errorf("gpt-4o sent to target azure/eu/gpt-4o-mini is priced %+v, want provider azure/eu's own %+v", got, us)
	}
}
