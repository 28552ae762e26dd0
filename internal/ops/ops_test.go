package ops_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

const opsKey = "key-ops"

// opsReplica is one router "process" for the operator endpoints: its own
// breakers, publisher and HTTP server on a shared database.
type opsReplica struct {
	id     string
	set    *breaker.Set
	pub    *breaker.Publisher
	server *ops.Server
	srv    *httptest.Server
}

// newOpsReplica: key is the operator key ("" for none, as on a loopback
// listener without ops_key_env); tune, if any, adjust its ops.Config.
func newOpsReplica(t *testing.T, db *testdb.DB, id, key string, conf ops.ConformanceSource, tune ...func(*ops.Config)) *opsReplica {
	t.Helper()
	prompts, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	set := breaker.New(map[string]breaker.Settings{
		"primary":  {ConsecutiveFailures: 2, OpenFor: time.Hour},
		"fallback": {ConsecutiveFailures: 2, OpenFor: time.Hour},
	}, breaker.Options{})
	t.Cleanup(set.Close)
	cfg := ops.Config{Key: key, Providers: []string{"primary", "fallback"}, Breakers: set, Replica: id,
		StaleAfter: time.Minute, Conformance: conf, DashboardRefresh: 5 * time.Second}
	for _, f := range tune {
		f(&cfg)
	}
	server := ops.New(cfg, db.Store, prompts, log)
	srv := httptest.NewServer(server)
	t.Cleanup(srv.Close)
	pub := breaker.NewPublisher(set, db.Store, breaker.PublisherOptions{Replica: id})
	return &opsReplica{id: id, set: set, pub: pub, server: server, srv: srv}
}

func (r *opsReplica) providers(t *testing.T) ops.ProvidersReply {
	t.Helper()
	req, _ := http.NewRequest("GET", r.srv.URL+"/v1/providers", nil)
	req.Header.Set("Authorization", "Bearer "+opsKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /v1/providers: %d %s", resp.StatusCode, raw)
	}
	var out ops.ProvidersReply
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func providerView(t *testing.T, reply ops.ProvidersReply, name string) ops.ProviderView {
	t.Helper()
	for _, p := range reply.Providers {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no provider %s in %+v", name, reply)
	return ops.ProviderView{}
}

// Acceptance 2 (issue 7): two router processes on one database; GET
// /v1/providers on either shows both replicas' breaker states.
func TestProvidersShowsEveryReplica(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	r1 := newOpsReplica(t, db, "replica-1", opsKey, nil)
	r2 := newOpsReplica(t, db, "replica-2", opsKey, nil)
	// Replica 1 sees the primary fail twice: its breaker opens. Replica 2's stays
	// closed.
	for range 2 {
		release, ok, _ := r1.set.Admit("primary")
		if !ok {
			t.Fatal("not admitted")
		}
		release(race.OutcomeFailure)
	}
	for _, r := range []*opsReplica{r1, r2} {
		if err := r.pub.Publish(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Some recent attempts for the statistics.
	job, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "k",
		Fingerprint: []byte{1}, PromptVersion: "2", Route: "default", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.Store.CreateAttempt(ctx, store.NewAttempt{JobID: job.ID, Provider: "fallback", Role: store.RolePrimary, LeaseOwner: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Store.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptLost, LatencyMS: 250}); err != nil {
		t.Fatal(err)
	}

	for _, r := range []*opsReplica{r1, r2} {
		reply := r.providers(t)
		if reply.Replica != r.id {
			t.Fatalf("replica %q", reply.Replica)
		}
		p := providerView(t, reply, "primary")
		if len(p.Breakers) != 2 {
			t.Fatalf("%s: primary breakers %+v, want both replicas", r.id, p.Breakers)
		}
		states := map[string]string{}
		for _, b := range p.Breakers {
			states[b.Replica] = b.State
			if b.Self != (b.Replica == r.id) {
				t.Fatalf("%s: self flag wrong on %+v", r.id, b)
			}
		}
		if states["replica-1"] != breaker.StateOpen || states["replica-2"] != breaker.StateClosed {
			t.Fatalf("%s: states %v", r.id, states)
		}
		// Eligibility is this replica's own breaker.
		if wantEligible := r == r2; p.Eligible != wantEligible {
			t.Fatalf("%s: primary eligible=%v (%s)", r.id, p.Eligible, p.IneligibleWhy)
		}
		if r == r1 && !strings.Contains(p.IneligibleWhy, "circuit breaker open") {
			t.Fatalf("reason %q", p.IneligibleWhy)
		}
		if p.ConformanceErr == "" {
			t.Fatal("conformance status should say it is not available")
		}
		f := providerView(t, reply, "fallback")
		if f.Stats == nil || f.Stats.Lost != 1 || f.Stats.SuccessRate == nil || *f.Stats.SuccessRate != 1 || f.Stats.P50MS == nil || *f.Stats.P50MS != 250 {
			t.Fatalf("fallback stats %+v", f.Stats)
		}
	}

	// Without the operator key: 401.
	resp, err := http.Get(r1.srv.URL + "/v1/providers")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unauthenticated: %d", resp.StatusCode)
	}
}

type fakeConformance []ops.ConformanceCell

func (f fakeConformance) ConformanceMatrix(context.Context) ([]ops.ConformanceCell, error) {
	return f, nil
}

// chromium finds the Debian chromium binary, installing the package when it is
// missing and the test runs as root; it skips the test only when that fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("chromium is not installed and the test is not root: apt-get install -y chromium")
	}
	install := func() error {
		cmd := exec.Command("apt-get", "install", "-y", "--no-install-recommends", "chromium")
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Logf("apt-get install chromium: %v\n%s", err, out)
		}
		return err
	}
	if install() != nil {
		if out, err := exec.Command("apt-get", "update").CombinedOutput(); err != nil {
			t.Skipf("chromium cannot be installed: apt-get update: %v\n%s", err, out)
		}
		if install() != nil {
			t.Skip("chromium cannot be installed")
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Skip("chromium installed but /usr/bin/chromium is missing")
	}
	return "/usr/bin/chromium"
}

func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// Acceptance 4 (issue 7): headless Chromium loads /dashboard after a race and
// the winner and the loser are shown. With DASHBOARD_SCREENSHOT=path it also
// writes a screenshot there (docs/dashboard.png is made this way).
func TestDashboardInBrowser(t *testing.T) {
	bin := chromium(t)
	db := testdb.New(t, store.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prompts, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	listener := store.NewListener(db.Pool, log)
	go listener.Run(ctx)
	<-listener.Ready()

	release := make(chan struct{})
	primary := providers.NewScripted(providers.ScriptedConfig{Name: "primary", Model: "m1",
		Respond: func(int, *providers.Request) providers.Step {
			<-release // answers only after the hedge has won
			return providers.Step{Output: validTriage}
		}})
	fallback := providers.NewScripted(providers.ScriptedConfig{Name: "fallback", Model: "m2",
		Respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} }})
	conf := fakeConformance{
		{Provider: "primary", Prompt: "triage", PromptVersion: "2", Passed: true, Fresh: true, RanAt: time.Now().Add(-time.Hour)},
		{Provider: "fallback", Prompt: "triage", PromptVersion: "2", Passed: true, Fresh: true, RanAt: time.Now().Add(-2 * time.Hour)},
		{Provider: "fallback", Prompt: "invoice", PromptVersion: "2", Passed: false, Fresh: true, RanAt: time.Now().Add(-3 * time.Hour)},
	}
	// The runner's admission is the replica's breaker set.
	var rep *opsReplica
	adm := &lateAdmission{}
	runner := race.New(race.Config{
		Store: db.Store, Listener: listener, Prompts: prompts, LeaseOwner: "replica-1", Log: log, Admission: adm,
		Targets: map[string]*race.Target{
			"primary":  {Provider: primary, Model: "m1", ContextWindow: 128000, Timeout: time.Minute},
			"fallback": {Provider: fallback, Model: "m2", ContextWindow: 128000, Timeout: time.Minute},
		},
		Routes: map[string]*race.Route{"default": {Providers: []string{"primary", "fallback"}, HedgeAfter: 10 * time.Millisecond,
			KeepLosers: true, MaxInflight: 2, MaxAttempts: 4}},
	})
	// The browser sends no key. The cost tiles need a priced target, and the
	// latency a hedge bought needs keep_losers, as the route has.
	rep = newOpsReplica(t, db, "replica-1", "", conf, func(c *ops.Config) { c.Priced, c.KeepLosers = true, true })
	adm.set = rep.set
	other := newOpsReplica(t, db, "replica-2", opsKey, nil)

	job, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "dash-1",
		Fingerprint: []byte{1}, PromptVersion: "3", Route: "default",
		Input:      json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`),
		LeaseOwner: "replica-1", LeaseFor: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	runner.Submit(job)
	changed, unsubscribe := listener.Subscribe(job.ID)
	for {
		j, err := db.Store.GetJobAny(ctx, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if store.IsTerminal(j.State) {
			break
		}
		select {
		case <-changed:
		case <-time.After(60 * time.Second):
			t.Fatalf("job did not settle: %s", j.State)
		}
	}
	unsubscribe()
	close(release)
	stopCtx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	runner.Stop(stopCtx) // waits for the primary's late result: lost
	stop()
	j, _ := db.Store.GetJobAny(ctx, job.ID)
	if len(j.Attempts) != 2 || j.Attempts[0].State != store.AttemptLost || j.Attempts[1].State != store.AttemptWon {
		t.Fatalf("race: %+v", j.Attempts)
	}
	for _, r := range []*opsReplica{rep, other} {
		if err := r.pub.Publish(ctx); err != nil {
			t.Fatal(err)
		}
	}

	url := rep.srv.URL + "/dashboard"
	dom := string(runChromium(t, bin, "--dump-dom", url))
	for _, want := range []string{
		`class="attempt" data-provider="fallback" data-role="hedge" data-state="won" data-winner="true"`,
		`class="attempt" data-provider="primary" data-role="primary" data-state="lost"`,
		`data-job="` + job.ID + `" data-state="succeeded"`,
		`data-replica="replica-1" data-state="closed"`,
		`data-replica="replica-2" data-state="closed"`,
		`http-equiv="refresh"`,
		"races lost",
		`id="cost"`, "cost of hedging", "latency bought per hedge win (1 wins)",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("dashboard DOM lacks %s", want)
		}
	}
	if strings.Contains(dom, `data-provider="primary" data-role="primary" data-state="lost" data-winner`) {
		t.Error("the loser is marked as the winner")
	}
	if strings.Contains(dom, "Customer cannot log in") {
		t.Error("the dashboard shows a job's result")
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}

	shot := os.Getenv("DASHBOARD_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "dashboard.png")
	} else if abs, err := filepath.Abs(shot); err == nil {
		shot = abs
	}
	runChromium(t, bin, "--hide-scrollbars", "--window-size=1366,900", "--screenshot="+shot, url)
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot at %s: %v", shot, err)
	}
}

// lateAdmission forwards to a breaker set made after the runner.
type lateAdmission struct{ set *breaker.Set }

func (a *lateAdmission) Admit(p string) (func(race.Outcome), bool, string) { return a.set.Admit(p) }

func TestStoreConformanceMatrix(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if _, err := db.Store.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: "fallback", Prompt: "triage",
		PromptVersion: "2", Passed: true, CasesTotal: 3, CasesPassed: 3, PromptDigest: strings.Repeat("a", 64), TargetDigest: strings.Repeat("b", 64)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Store.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: "primary", Prompt: "triage",
		PromptVersion: "2", Passed: false, CasesTotal: 3, CasesPassed: 2, PromptDigest: strings.Repeat("a", 64), TargetDigest: strings.Repeat("b", 64)}); err != nil {
		t.Fatal(err)
	}
	cells, err := ops.StoreConformance{Store: db.Store, MaxAge: time.Hour}.ConformanceMatrix(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 || cells[0].Provider != "fallback" || !cells[0].Passed || !cells[0].Fresh ||
		cells[1].Provider != "primary" || cells[1].Passed || cells[1].Fresh || cells[1].Detail != "2/3 cases passed" {
		t.Fatalf("cells %+v", cells)
	}
	r := newOpsReplica(t, db, "replica-1", opsKey, ops.StoreConformance{Store: db.Store, MaxAge: time.Hour})
	p := providerView(t, r.providers(t), "primary")
	if len(p.Conformance) != 1 || p.Conformance[0].Passed || p.ConformanceErr != "" {
		t.Fatalf("primary conformance %+v %q", p.Conformance, p.ConformanceErr)
	}
}

const validTriage = `{"category":"technical","priority":"high","summary":"Customer cannot log in after the reset.","needs_human":false}`
