package ops

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/routerhq/router/internal/store"
)

// maxReasons is how many distinct reasons a failed job's summary lists
// (failureSummary); the others are counted.
const maxReasons = 4

// failureSummary says why a job with an error failed, in what the dashboard
// may show. The job's error text is not shown: an output that breaks the
// prompt's contract is quoted in it (the violation's message: "\"Jane Doe\"
// is not one of …"), and so can be an input a template could not render —
// tenants' data, which the page never shows. Instead: the job's attempts that
// ended without an answer say what ended them (attemptWhy); with none, the
// routing decisions say why no target was eligible (the router's own
// reasons: breakers, conformance, context windows); else the operator is
// pointed to `router jobs get`, which prints the job in full.
//
// Attempts that ended alike (same provider, same model sent, same reason) are
// one reason, with the first one's seq and their number ("#3 primary:
// timeout (×5)"); at most maxReasons reasons are listed, the others counted
// ("and 2 more reasons"). An attempt that sent a model other than its
// target's own says which, and the breaker that counted it ("#1 openai
// (model gpt-4o-mini, breaker openai/gpt-4o-mini): model_not_found (HTTP
// 404)"): the target's own model was not what failed.
func failureSummary(j *store.Job, attempts []dashAttempt) string {
	if j.Error == nil {
		return ""
	}
	type reason struct {
		seq           int
		provider, why string
		n             int
	}
	var reasons []*reason
	byText := map[[2]string]*reason{}
	for _, a := range attempts {
		if a.Why == "" {
			continue
		}
		provider := a.Provider
		if a.SentLabel != "" {
			provider += " (" + a.SentLabel + ")"
		}
		k := [2]string{provider, a.Why}
		if r := byText[k]; r != nil {
			r.n++
			continue
		}
		r := &reason{seq: a.Seq, provider: provider, why: a.Why, n: 1}
		byText[k] = r
		reasons = append(reasons, r)
	}
	if len(reasons) > 0 {
		ended := make([]string, 0, min(len(reasons), maxReasons)+1)
		for _, r := range reasons[:min(len(reasons), maxReasons)] {
			s := fmt.Sprintf("#%d %s: %s", r.seq, r.provider, r.why)
			if r.n > 1 {
				s += fmt.Sprintf(" (×%d)", r.n)
			}
			ended = append(ended, s)
		}
		if more := len(reasons) - maxReasons; more > 0 {
			ended = append(ended, fmt.Sprintf("and %d more %s", more, plural(more, "reason")))
		}
		return strings.Join(ended, "; ")
	}
	var decisions []struct {
		Provider string `json:"provider"`
		Event    string `json:"event"`
		Eligible bool   `json:"eligible"`
		Reason   string `json:"reason"`
	}
	var why []string
	if len(j.Routing) > 0 && json.Unmarshal(j.Routing, &decisions) == nil {
		for _, d := range decisions {
			if d.Event == "" && !d.Eligible && d.Reason != "" {
				why = append(why, d.Provider+": "+d.Reason)
			}
		}
	}
	if len(why) > 0 && len(j.Attempts) == 0 {
		return "no eligible target: " + strings.Join(why, "; ")
	}
	return "the job's error is not shown here (it can quote tenants' data): `router jobs get " + j.ID + "` prints it"
}

// plural is word, with an "s" unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
