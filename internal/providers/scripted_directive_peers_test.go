package providers

import (
	"context"
	"strings"
	"testing"
)

// `#scripted@nosuch: status=503` — a typo in the provider's name — was
// silently ignored (each scripted provider skipped a line addressed to
// another name, and none knew the others'), while a typo in the directive
// itself was refused: the demo's failover then "did not work". A scripted
// provider told the configuration's scripted names refuses a line addressed
// to none of them, naming them; one addressed to another of them is still
// that one's. Found in a newcomer's walkthrough.
func TestScriptedDirectiveToUnknownProviderIsRefused(t *testing.T) {
	peers := []string{"g-primary", "g-fallback"}
	primary := NewScripted(ScriptedConfig{Name: "g-primary", Peers: peers})
	_, err := primary.Complete(context.Background(), userReq("a1", "b\n#scripted@g-primay: status=503"))
	e := assertKind(t, err, KindBadRequest, FaultCaller, ActionStop, false)
	for _, want := range []string{`"g-primay"`, "g-primary, g-fallback"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("refusal %q does not say %s", e.Message, want)
		}
	}
	// Addressed to the other scripted provider: not this one's to follow.
	if resp, err := primary.Complete(context.Background(), userReq("a2", "b\n#scripted@g-fallback: status=503")); err != nil || resp.Content != "{}" {
		t.Errorf("a line addressed to g-fallback: %+v %v, want g-primary to answer as scripted", resp, err)
	}
	fallback := NewScripted(ScriptedConfig{Name: "g-fallback", Peers: peers})
	_, err = fallback.Complete(context.Background(), userReq("a3", "b\n#scripted@g-fallback: status=503"))
	assertKind(t, err, KindUnavailable, FaultProvider, ActionRetry, false)
	// Without Peers (a provider built in code), any other name is another's.
	if _, err := NewScripted(ScriptedConfig{Name: "x"}).Complete(context.Background(), userReq("a4", "#scripted@nosuch: status=503")); err != nil {
		t.Errorf("without peers: %v, want the line ignored", err)
	}
}
