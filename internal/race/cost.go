package race

import (
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// storePrice is a target's configured price as stored on the attempts this
// process makes on it (their cost_usd follows from it); nil: unpriced.
func storePrice(p *providers.Price) *store.Price {
	if p == nil {
		return nil
	}
	return &store.Price{InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok}
}
