package ops_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/store"
)

// A chat route with a conformance_prompt and `models: [alias-model]` sends
// alias-model to its fallback when a chat completion names it, and the gate
// judges that failover for alias-model. GET /v1/providers listed the
// route's chat jobs only for the target's own model, so a fallback that
// passed only with its own model showed as admitted there, while the gate
// refused every failover or hedge sending alias-model. The view now has an
// entry per model the gate is asked for (the target's own, then each of the
// route's models, once each), with the gate's refusal for alias-model.
func TestProvidersGateShowsChatAliasModels(t *testing.T) {
	db, prompts, triage, _ := ops.ConformanceFixture(t)
	models := map[string]string{"primary": "primary-model", "fallback": "fallback-model"}
	modelOf := func(id string) string { return models[id] }
	gate := conformance.NewGate(db.Store, conformance.GateFallbacks, time.Hour, conformance.TargetModels(modelOf), conformance.CacheFor(0))
	passRun(t, db.Store, "fallback", "fallback-model", triage) // its own model only
	targets := []string{"primary", "fallback"}
	srv := httptest.NewServer(ops.New(ops.Config{Providers: targets, TargetModels: modelOf, ConformanceMaxAge: time.Hour, Gate: gate,
		// alias-model twice and the target's own model among the models:
		// each asked once.
		ChatRoutes: []conformance.ChatRoute{{Name: "chat", Targets: targets, Prompt: "triage", Models: []string{"alias-model", "fallback-model", "alias-model"}}},
		GateRoutes: []ops.GateRoute{{Name: "chat", Targets: targets, ConformancePrompt: "triage"}}}, db.Store, prompts, nil))
	defer srv.Close()

	fallback := providersWithGate(t, srv.URL)["fallback"]
	byModel := map[string]ops.GateEntry{}
	chatEntries := func(v gateView) (entries []ops.GateEntry, refused int) {
		for _, e := range v.Gate {
			if e.Jobs == ops.JobsChat { // not the prompt jobs that may name route chat
				entries = append(entries, e)
				if !e.Admitted {
					refused++
				}
			}
		}
		return entries, refused
	}
	chat, refused := chatEntries(fallback)
	for _, e := range chat {
		if e.Route != "chat" || e.Prompt != "triage" || e.Role != store.RoleFailover {
			t.Errorf("fallback: unexpected gate entry %+v", e)
			continue
		}
		if _, dup := byModel[e.Model]; dup {
			t.Errorf("fallback: two chat entries for model %s: %+v", e.Model, fallback.Gate)
		}
		byModel[e.Model] = e
	}
	if len(chat) != 2 {
		t.Errorf("fallback: %d chat gate entries, want 2 (its own model and alias-model): %+v", len(chat), fallback.Gate)
	}
	if e, ok := byModel["fallback-model"]; !ok || !e.Admitted || e.Reason != "" {
		t.Errorf("fallback for its own model: %+v (listed: %v); want admitted by its pass", e, ok)
	}
	cmd := "router conformance run --provider fallback --prompt triage"
	e, ok := byModel["alias-model"]
	if !ok || e.Admitted || e.Command != cmd || !strings.Contains(e.Reason, "no passing conformance run for triage@3") ||
		!strings.Contains(e.Reason, "alias-model") {
		t.Errorf("fallback for alias-model: %+v (listed: %v); want refused, the reason naming alias-model, and %q", e, ok, cmd)
	}
	if refused != 1 {
		t.Errorf("fallback: %d chat entries refused, want 1 (alias-model)", refused)
	}
	// The primary is not gated under conformance.gate: fallbacks, for any model.
	if p := providersWithGate(t, srv.URL)["primary"]; len(p.Gate) != 0 {
		t.Errorf("primary: %+v; want no gate entry", p.Gate)
	}

	// A pass with alias-model admits it.
	passRun(t, db.Store, "fallback", "alias-model", triage)
	fallback = providersWithGate(t, srv.URL)["fallback"]
	if chat, refused := chatEntries(fallback); refused != 0 || len(chat) != 2 {
		t.Errorf("fallback after its alias-model pass: %+v; want both models admitted", fallback.Gate)
	}
}
