package breaker

import (
	"slices"

	"github.com/routerhq/router/internal/race"
)

// SentModel is an attempt on Target (a target id) that sends Model in place
// of the target's own model.
type SentModel struct {
	Target, Model string
}

var _ race.ModelBreakers = (*Set)(nil)

// sentBreakers keeps the entries of sent whose breaker exists, and lists per
// target the distinct breakers they name, sorted.
func sentBreakers(sent map[SentModel]string, breakers map[string]*providerBreaker) (map[SentModel]string, map[string][]string) {
	kept := make(map[SentModel]string, len(sent))
	of := map[string][]string{}
	for k, name := range sent {
		if _, ok := breakers[name]; !ok {
			continue
		}
		kept[k] = name
		if !slices.Contains(of[k.Target], name) {
			of[k.Target] = append(of[k.Target], name)
		}
	}
	for _, names := range of {
		slices.Sort(names)
	}
	return kept, of
}

// BreakerOf implements race.ModelBreakers: the breaker that admits and
// counts an attempt on target sending model in place of the target's own
// (Options.Sent), or "" when there is none of its own (the target's breaker
// counts it).
func (s *Set) BreakerOf(target, model string) string {
	return s.sent[SentModel{Target: target, Model: model}]
}

// SentBreakers implements race.ModelBreakers: the breakers of the models
// target may send in place of its own (Options.Sent), sorted.
func (s *Set) SentBreakers(target string) []string {
	return slices.Clone(s.sentOf[target])
}
