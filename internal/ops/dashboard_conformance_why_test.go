package ops_test

import (
	"context"
	"html"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/ops"
)

// The dashboard's conformance matrix says why a pass does not count: a pass
// made just now that the gate refuses because the target now sends another
// model, or because the prompt's content changed since, shows "pass (other
// model)" or "pass (prompt changed)" with the reason and what to run; "stale
// pass" is only a pass older than conformance.max_age. (Every pass that did
// not count showed as "stale pass", and the reason was never shown.)
func TestDashboardSaysWhyAPassDoesNotCount(t *testing.T) {
	db, prompts, triage, record := ops.ConformanceFixture(t)
	ctx := context.Background()
	pass := func(provider, model, digest string) { t.Helper(); record(provider, model, digest, "") }
	pass("fresh", "m", triage.Digest)
	pass("moved", "old", triage.Digest)    // the target now sends "m"
	pass("edited", "m", "another-content") // the prompt changed since
	pass("aged", "m", triage.Digest)       // two hours ago, past the 1h max_age
	if _, err := db.Pool.Exec(ctx, `UPDATE conformance_runs SET started_at = now() - interval '2 hours',
		finished_at = now() - interval '2 hours' WHERE provider = 'aged'`); err != nil {
		t.Fatal(err)
	}
	providers := []string{"fresh", "moved", "edited", "aged"}
	modelOf := func(string) string { return "m" }
	srv := httptest.NewServer(ops.New(ops.Config{Providers: providers, ConformanceMaxAge: time.Hour, TargetModels: modelOf,
		Conformance: ops.StoreConformance{Store: db.Store, MaxAge: time.Hour, Prompts: prompts, TargetModels: modelOf}}, db.Store, prompts, nil))
	defer srv.Close()
	page := getPage(t, srv.URL+"/dashboard")
	i, j := strings.Index(page, `<section id="conformance">`), strings.Index(page, `<section id="jobs">`)
	if i < 0 || j < i {
		t.Fatalf("no conformance section:\n%s", page)
	}
	section := html.UnescapeString(page[i:j])
	cells := regexp.MustCompile(`(?s)<td>(.*?)</td>`).FindAllStringSubmatch(section, -1)
	if len(cells) != 1+len(providers) { // the prompt, then one per provider
		t.Fatalf("%d cells, want one per provider:\n%s", len(cells), section)
	}
	for k, want := range []struct{ badge, why string }{
		{`<span class="badge pass">pass</span>`, ""},
		{`<span class="badge stale">pass (other model)</span>`, "it passed with model old; the target now sends m: run `router conformance run --provider moved --prompt triage`"},
		{`<span class="badge stale">pass (prompt changed)</span>`, "the prompt triage@3 changed since this run; bump its version or rerun `router conformance run --provider edited --prompt triage`"},
		{`<span class="badge stale">stale pass</span>`, ""},
	} {
		cell := cells[1+k][1]
		if !strings.Contains(cell, want.badge) || want.why != "" && !strings.Contains(cell, `<div class="why">1/1 cases passed; `+want.why+`</div>`) ||
			want.why == "" && strings.Contains(cell, `<div class="why">`) {
			t.Errorf("cell of %s:\n%s\nwant badge %s and reason %q", providers[k], cell, want.badge, want.why)
		}
	}
}
