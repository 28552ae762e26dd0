package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

const (
	acmeKey   = "key-acme"
	globexKey = "key-globex"
)

const validTriage = `{"category":"technical","priority":"high","summary":"Customer cannot log in after the reset.","needs_human":false}`

type bundle struct {
	db       *testdb.DB
	srv      *httptest.Server
	primary  *providers.Scripted
	fallback *providers.Scripted
	runner   *race.Runner
	listener *store.Listener
	prompts  *prompt.Set
	api      *api.Server
}

type options struct {
	keepAlive time.Duration // api.Config.StreamKeepAlive
	retention time.Duration
	respond   func(call int, req *providers.Request) providers.Step
	timeout   time.Duration
	maxBody   int64
	// models are chat model aliases of the default route.
	models []string
	// window, when set, is the primary's context window.
	window int
	// fallback, when set, adds a second provider to the route.
	fallback func(call int, req *providers.Request) providers.Step
	// limits: per-owner limits (SPEC §17).
	limits      api.Limits
	ownerLimits map[string]api.Limits
	liveRefresh time.Duration
	// hedgeAfter, when set, hedges on the fallback after it.
	hedgeAfter time.Duration
	// tracer, when set, sees every statement the router (runner and API)
	// sends: they go through a pool of their own built with it.
	tracer pgx.QueryTracer
	// logs, when set, receives the router's log at info level.
	logs io.Writer
	// recheck: api.Config.RecheckEvery.
	recheck time.Duration
	// counters, when set, are the API's counters (a metrics.Metrics).
	counters api.Counters
	// admission, when set, is the runner's admission (circuit breakers).
	admission race.Admission
	// exec, when set, wraps the runner as the API's executor.
	exec func(api.Executor) api.Executor
}

func setup(t *testing.T, opt options) *bundle {
	t.Helper()
	db := testdb.New(t, store.Options{KeyRetention: opt.retention})
	prompts, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	respond := opt.respond
	if respond == nil {
		respond = func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} }
	}
	primary := providers.NewScripted(providers.ScriptedConfig{Name: "primary", Model: "m1", Respond: respond})
	timeout := opt.timeout
	if timeout == 0 {
		timeout = time.Minute
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if opt.logs != nil {
		log = slog.New(slog.NewTextHandler(opt.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	listener := store.NewListener(db.Pool, log)
	window := opt.window
	if window == 0 {
		window = 128000
	}
	targets := map[string]*race.Target{"primary": {Provider: primary, Model: "m1", ContextWindow: window, Timeout: timeout}}
	route := &race.Route{Providers: []string{"primary"}, MaxInflight: 2, MaxAttempts: 4, HedgeAfter: opt.hedgeAfter}
	var fallback *providers.Scripted
	if opt.fallback != nil {
		fallback = providers.NewScripted(providers.ScriptedConfig{Name: "fallback", Model: "m2", Respond: opt.fallback})
		targets["fallback"] = &race.Target{Provider: fallback, Model: "m2", ContextWindow: 128000, Timeout: time.Minute}
		route.Providers = append(route.Providers, "fallback")
	}
	st := db.Store
	if opt.tracer != nil {
		cfg, err := pgxpool.ParseConfig(db.URL)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ConnConfig.Tracer = opt.tracer
		store.ConfigurePool(cfg) // as every pool the router's store uses
		pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		st = store.New(pool, store.Options{KeyRetention: opt.retention})
	}
	listener.SkipNotificationsOf(st) // as router serve pairs them, before Run
	ctx, cancel := context.WithCancel(context.Background())
	go listener.Run(ctx)
	<-listener.Ready()
	runner := race.New(race.Config{
		Store: st, Listener: listener, Prompts: prompts, LeaseOwner: "test", Log: log,
		Targets: targets, Routes: map[string]*race.Route{"default": route}, Admission: opt.admission,
	})
	var exec api.Executor = runner
	if opt.exec != nil {
		exec = opt.exec(runner)
	}
	apiSrv := api.New(api.Config{MaxBodyBytes: opt.maxBody, LeaseOwner: "test", Lease: 30 * time.Second,
		Limits: opt.limits, OwnerLimits: opt.ownerLimits, LiveRefresh: opt.liveRefresh, StreamKeepAlive: opt.keepAlive,
		RecheckEvery: opt.recheck}, api.Deps{
		Store: st, Listener: listener, Prompts: prompts, Routes: map[string]bool{"default": true}, Models: aliases(opt.models),
		Exec: exec, Log: log, Counters: opt.counters,
		Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme", globexKey: "globex"}, Store: st},
	})
	srv := httptest.NewServer(apiSrv)
	t.Cleanup(func() {
		srv.Close()
		stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		runner.Stop(stopCtx)
		cancel()
	})
	return &bundle{db: db, srv: srv, primary: primary, fallback: fallback, runner: runner, listener: listener, prompts: prompts, api: apiSrv}
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

func (r reply) job() string { s, _ := r.body["id"].(string); return s }

// do sends a request; hdr pairs are header name, value.
func (b *bundle) do(t *testing.T, method, path, apiKey, body string, hdr ...string) reply {
	t.Helper()
	r, err := send(b.srv.URL+path, method, apiKey, body, hdr...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// send is do for any server, and for goroutines other than the test's.
func send(url, method, apiKey, body string, hdr ...string) (reply, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return reply{}, err
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return reply{status: resp.StatusCode, header: resp.Header, body: m, raw: raw}, nil
}

func (b *bundle) create(t *testing.T, apiKey, key, body string, hdr ...string) reply {
	t.Helper()
	h := append([]string{}, hdr...)
	if key != "" {
		h = append(h, "Idempotency-Key", key)
	}
	return b.do(t, "POST", "/v1/jobs", apiKey, body, h...)
}

func (b *bundle) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := b.db.Pool.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func triageBody(subject string) string {
	return `{"prompt":"triage","input":{"subject":"` + subject + `","body":"I cannot log in since yesterday."}}`
}

func aliases(models []string) map[string]string {
	m := map[string]string{}
	for _, name := range models {
		m[name] = "default"
	}
	return m
}
