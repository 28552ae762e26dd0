package ops_test

import (
	"context"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// invalidJobPage runs one job whose only answer is output and returns the
// dashboard of an operator surface that has loaded the repository's prompts.
func invalidJobPage(t *testing.T, output string) string {
	t.Helper()
	prompts, err := prompt.LoadDir(racetest.PromptsDir())
	if err != nil {
		t.Fatal(err)
	}
	rb := racetest.New(t, racetest.Options{Route: race.Route{}, Prompts: prompts, Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: output} }},
	}})
	if j := rb.WaitSettled(t, rb.Submit(t).ID); j.State != "failed" {
		t.Fatalf("job %s, want failed on its invalid output", j.State)
	}
	srv := httptest.NewServer(ops.New(ops.Config{}, rb.Store, prompts, nil))
	defer srv.Close()
	return getPage(t, srv.URL+"/dashboard")
}

// An output object keyed by a tenant's data (a name, an e-mail address)
// breaks a prompt that refuses extra keys, and the violation's path is that
// key: the dashboard showed it, whole, for every owner's recent jobs. It now
// shows the rule and the path with the undeclared key as "*". Found by
// review.
func TestDashboardShowsNoOutputKeys(t *testing.T) {
	const secret = "Jane Doe 4111-1111-1111-1111"
	page := invalidJobPage(t, `{"category":"technical","priority":"high","summary":"s","needs_human":false,"`+
		secret+strings.Repeat("x", 2000)+`":true}`)
	if i := strings.Index(page, "Jane Doe"); i >= 0 {
		t.Fatalf("the dashboard shows a key of a tenant's output: ...%.200s...", page[max(i-120, 0):])
	}
	if !regexp.MustCompile(`#1 primary: output breaks the contract: [a-zA-Z_.]+ at /\*`).MatchString(page) {
		t.Errorf("the dashboard does not say which rule the output broke, and where:\n%s", jobSection(page))
	}
}

// The names the prompt's schema declares stay in the path shown.
func TestDashboardKeepsDeclaredPathNames(t *testing.T) {
	page := invalidJobPage(t, `{"category":5,"priority":"high","summary":"s","needs_human":false}`)
	if !strings.Contains(page, "#1 primary: output breaks the contract: schema.type at /category") {
		t.Errorf("the dashboard does not name the declared property the output broke:\n%s", jobSection(page))
	}
}

// cancelLiveCounts makes the live jobs' count (store.LiveJobCounts) fail as
// a lost connection would, every other statement going through.
type cancelLiveCounts struct{}

func (cancelLiveCounts) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "WHERE state IN ('pending', 'running', 'unknown') GROUP BY state") {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		return ctx
	}
	return ctx
}

func (cancelLiveCounts) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// When the live jobs cannot be counted, their tiles say "–", not 0 (which
// reads as "no job needs an operator"), beside the error the page lists.
func TestDashboardLiveTilesUnknownWhenUnread(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = cancelLiveCounts{}
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	srv := httptest.NewServer(ops.New(ops.Config{}, store.New(pool, store.Options{}), nil, nil))
	defer srv.Close()
	page := getPage(t, srv.URL+"/dashboard")
	if !strings.Contains(page, "live jobs: ") {
		t.Fatalf("the page lists no error for the live jobs' count: the test did not make it fail\n%.3000s", page)
	}
	for _, label := range []string{"jobs unknown", "jobs running", "jobs pending"} {
		m := regexp.MustCompile(`<b>([^<]*)</b><span>` + label + `</span>`).FindStringSubmatch(page)
		if m == nil || m[1] != "–" {
			t.Errorf("the live jobs could not be counted: the %q tile says %v, want –", label, m)
		}
	}
	m := regexp.MustCompile(`<b>([^<]*)</b><span>jobs succeeded</span>`).FindStringSubmatch(page)
	if m == nil || m[1] != "0" {
		t.Errorf("the counters were read: the jobs succeeded tile says %v, want 0", m)
	}
}
