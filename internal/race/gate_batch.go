package race

import (
	"context"

	"github.com/routerhq/router/internal/prompt"
)

// GateAsk is one question a plan puts to the gate: may provider take role
// for prompt p's job asking for model (Gate.AllowModel's arguments).
type GateAsk struct {
	Provider string
	Model    string
	Prompt   *prompt.Prompt
	Role     string
}

// GateAnswer is the gate's answer to a GateAsk (Gate.AllowModel's results).
type GateAnswer struct {
	OK     bool
	Reason string
}

// BatchGate is a Gate that answers all the questions of a plan together:
// the reads they need run at once, so a plan waits for the slowest of them
// (each bounded by the gate), not for their sum, before its first attempt —
// an ungated primary is not held back by its fallbacks' reads, one after
// another, while the gate's table cannot be read. It answers asks in order,
// each as AllowModel would. The conformance gate is one; a Gate that is not
// is asked target by target.
type BatchGate interface {
	Gate
	AllowModels(ctx context.Context, asks []GateAsk) []GateAnswer
}

// gateAll asks the gate about every target of a plan that passed the other
// checks (asks), and returns the answers in order: at once from a
// BatchGate, else one AllowModel after another.
func gateAll(g Gate, asks []GateAsk) []GateAnswer {
	if len(asks) == 0 {
		return nil
	}
	ctx := context.Background()
	if b, ok := g.(BatchGate); ok {
		return b.AllowModels(ctx, asks)
	}
	out := make([]GateAnswer, len(asks))
	for i, a := range asks {
		out[i].OK, out[i].Reason = g.AllowModel(ctx, a.Provider, a.Model, a.Prompt, a.Role)
	}
	return out
}
