package ops

// sentModels tells the dashboard which attempts sent a model other than
// their target's own (a route's `models` name, an alias) and which breaker
// counted them: such an attempt is stored under its target's id, and its
// failure — model_not_found from a provider that does not serve the alias —
// read as the target's own ("#1 openai: model_not_found (HTTP 404)") while
// the target's model was never sent and breaker openai/gpt-4o-mini, not
// openai, counted it.
type sentModels struct {
	// breakers: Config.SentBreakers by target and model sent.
	breakers map[[2]string]string
	// own: Config.TargetModels (nil: not known).
	own func(target string) string
}

func newSentModels(ops Config) sentModels {
	s := sentModels{breakers: make(map[[2]string]string, len(ops.SentBreakers)), own: ops.TargetModels}
	for _, b := range ops.SentBreakers {
		s.breakers[[2]string{b.Provider, b.Model}] = b.Breaker
	}
	return s
}

// of is what an attempt on target that sent model shows beside its target:
// the model, when it is known not to be the target's own (a SentBreakers
// entry names it, or TargetModels gives the target another), and the breaker
// that counted it when that is not the target's. Both "" for the target's
// own model, or when the page cannot tell.
func (s sentModels) of(target, model string) (sent, breaker string) {
	if model == "" {
		return "", ""
	}
	if b, ok := s.breakers[[2]string{target, model}]; ok {
		if b == target {
			b = ""
		}
		return model, b
	}
	if s.own != nil {
		if own := s.own(target); own != "" && own != model {
			return model, ""
		}
	}
	return "", ""
}

// sentLabel says what an attempt sent, beside its target's name on the
// dashboard ("model gpt-4o-mini, breaker openai/gpt-4o-mini"); "" for an
// attempt that sent its target's own model.
func sentLabel(sent, breaker string) string {
	switch {
	case sent == "":
		return ""
	case breaker == "":
		return "model " + sent
	}
	return "model " + sent + ", breaker " + breaker
}
