package providers

// Price is what a provider (or a target) charges, in USD per million tokens.
// The router ships no prices: they come from the configuration.
type Price struct {
	InputPerMTok  float64 `json:"input_per_mtok" yaml:"input_per_mtok"`
	OutputPerMTok float64 `json:"output_per_mtok" yaml:"output_per_mtok"`
}

// Cost is the USD cost of usage at price p; ok is false when p is nil or
// usage reports no tokens (no usage, no cost). The store computes the same
// figure in SQL (migrations/0008_cost.sql); keep the two formulas alike.
func (p *Price) Cost(u Usage) (usd float64, ok bool) {
	if p == nil || (u.PromptTokens == 0 && u.CompletionTokens == 0) {
		return 0, false
	}
	return (float64(u.PromptTokens)*p.InputPerMTok + float64(u.CompletionTokens)*p.OutputPerMTok) / 1e6, true
}
