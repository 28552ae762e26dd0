package race_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A target the conformance gate refused because it could not read its
// results (race.GateUnread: the gate fails closed while conformance_runs is
// locked or the database does not answer) clears by itself: next_step says
// a retry shortly may use it, and sends the caller to the operator only for
// the targets that have no fresh pass.
func TestNextStepTellsAnUnreadGateFromAMissingPass(t *testing.T) {
	const (
		unread = `{"provider":"f1","eligible":false,"cause":"conformance_gate","reason":"cannot read conformance results for triage@2 (timeout)"}`
		stale  = `{"provider":"f2","eligible":false,"cause":"conformance_gate","reason":"last pass is 9 days old"}`
	)
	job := func(decisions ...string) *store.Job {
		return &store.Job{ID: "0190a23b-58d9-7d14-b84d-99dabf56969c", State: store.JobFailed, IdempotencyKey: "k",
			Routing: json.RawMessage(`[{"provider":"p","eligible":true},` + strings.Join(decisions, ",") + `]`)}
	}
	const (
		shortly  = "a retry in a few seconds may use"
		operator = "once the router's operator has made"
		same     = "would be gated the same way"
	)
	for _, c := range []struct {
		name      string
		job       *store.Job
		say, deny []string
	}{
		{"unread only", job(unread), []string{"f1: cannot read conformance results", shortly + " them; start a new round"}, []string{operator, same, "no fresh passing"}},
		{"missing pass only", job(stale), []string{"f2: last pass is 9 days old", same, operator}, []string{shortly}},
		{"both", job(unread, stale), []string{"(f2: last pass is 9 days old), so a retry now " + same, "(f1: cannot read conformance results", shortly + " those; " + operator + " the skipped ones pass"},
			[]string{"(f1: cannot read conformance results for triage@2 (timeout); f2"}},
	} {
		step := race.NextStep(c.job)
		for _, s := range c.say {
			if !strings.Contains(step, s) {
				t.Errorf("%s: next_step does not say %q:\n%s", c.name, s, step)
			}
		}
		for _, s := range c.deny {
			if strings.Contains(step, s) {
				t.Errorf("%s: next_step says %q:\n%s", c.name, s, step)
			}
		}
	}
}
