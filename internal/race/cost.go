package race

import "github.com/routerhq/router/internal/store"

// TargetPrices is the price of every priced target, by target id, for
// store.SetTargetPrices: the database prices each attempt from it.
func TargetPrices(targets map[string]*Target) map[string]store.Price {
	out := map[string]store.Price{}
	for id, t := range targets {
		if t.Price != nil {
			out[id] = store.Price{InputPerMTok: t.Price.InputPerMTok, OutputPerMTok: t.Price.OutputPerMTok}
		}
	}
	return out
}
