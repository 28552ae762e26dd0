package ops_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// opsDo sends method path to h with Authorization auth (none when empty) and
// returns the answer and its body.
func opsDo(t *testing.T, h http.Handler, method, path, auth string) (*http.Response, string) {
	t.Helper()
	r := httptest.NewRequest(method, "http://127.0.0.1:9090"+path, nil)
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	resp := w.Result()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// A browser cannot send 'Authorization: Bearer', and offers no prompt for a
// Bearer challenge: with ops_key_env set, /dashboard could not be opened in
// one. The operator key is also taken as the password of HTTP Basic
// authentication (any user name), and a 401 asks for it. Found by review.
func TestOperatorKeyAsBasicPassword(t *testing.T) {
	const key, tenantKey = "s3cret-operator-key", "rk_tenant-key"
	s := ops.New(ops.Config{Key: key}, nil, nil, nil)
	for _, c := range []struct {
		auth string
		want int
	}{
		{basic("operator", key), http.StatusNotFound}, // let in: no such endpoint
		{basic("", key), http.StatusNotFound},
		{basic("operator", key+"\n"), http.StatusNotFound}, // a key file's newline, trimmed as a Bearer key's is
		{basic("operator", " "+key+" "), http.StatusNotFound},
		{"basic " + base64.StdEncoding.EncodeToString([]byte("x:"+key)), http.StatusNotFound}, // the scheme is case-insensitive
		{"Bearer " + key, http.StatusNotFound},                                                // Bearer still works
		{basic("operator", tenantKey), http.StatusUnauthorized},
		{basic(key, ""), http.StatusUnauthorized},             // the key as the user name is not the key
		{basic("operator", key+"x"), http.StatusUnauthorized}, // nor a longer one
		{basic("operator", key[:len(key)-1]), http.StatusUnauthorized},
		{"Basic " + key, http.StatusUnauthorized}, // not base64 of user:password
		{"Bearer " + tenantKey, http.StatusUnauthorized},
		{"", http.StatusUnauthorized},
	} {
		resp, body := opsDo(t, s, "GET", "/v1/nothing", c.auth)
		if resp.StatusCode != c.want {
			t.Errorf("Authorization %q: %d %s, want %d", c.auth, resp.StatusCode, body, c.want)
		}
	}
	resp, body := opsDo(t, s, "GET", "/dashboard", "")
	challenges := resp.Header.Values("WWW-Authenticate")
	hasScheme := func(scheme string) bool {
		for _, v := range challenges {
			if strings.HasPrefix(v, scheme+` realm="router-ops"`) {
				return true
			}
		}
		return false
	}
	if resp.StatusCode != http.StatusUnauthorized || !hasScheme("Basic") || !hasScheme("Bearer") {
		t.Errorf("GET /dashboard without a key: %d, WWW-Authenticate %q, want 401 with a Basic and a Bearer challenge of realm router-ops", resp.StatusCode, challenges)
	}
	if !strings.Contains(body, "Basic") {
		t.Errorf("the 401 does not say the key may be sent as a Basic password: %s", body)
	}
}

// Headless Chromium opens a keyed /dashboard with the key in the URL's
// password: it sends it only in answer to a Basic challenge.
func TestDashboardInBrowserWithOperatorKey(t *testing.T) {
	bin := chromium(t)
	db := testdb.New(t, store.Options{})
	rep := newOpsReplica(t, db, "replica-1", opsKey, nil)
	if err := rep.pub.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(rep.srv.URL + "/dashboard")
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("operator", opsKey)
	dom := string(runChromium(t, bin, "--dump-dom", u.String()))
	if !strings.Contains(dom, `data-replica="replica-1"`) {
		t.Fatalf("the browser did not get the dashboard with the operator key as its Basic password:\n%s", dom)
	}
}

// A method other than GET or HEAD on an operator endpoint is a 405 naming the
// methods it answers, not a 404 saying the path is no operator endpoint.
// Found by review.
func TestWrongMethodOnOperatorEndpoint(t *testing.T) {
	s := ops.New(ops.Config{Key: opsKey, Metrics: http.NotFoundHandler()}, nil, nil, nil)
	for _, path := range []string{"/dashboard", "/metrics", "/v1/providers", "/v1/conformance"} {
		for _, method := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
			resp, body := opsDo(t, s, method, path, "Bearer "+opsKey)
			var p struct{ Type, Detail string }
			_ = json.Unmarshal([]byte(body), &p)
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" ||
				!strings.Contains(p.Detail, "GET and HEAD") || !strings.HasSuffix(p.Type, "/method-not-allowed") {
				t.Errorf("%s %s: %d, Allow %q, %s; want 405, Allow: GET, HEAD, naming them", method, path, resp.StatusCode, resp.Header.Get("Allow"), body)
			}
		}
	}
	// Paths that are no endpoint keep their 404, whatever the method; so does
	// /metrics without a metrics handler.
	noMetrics := ops.New(ops.Config{Key: opsKey}, nil, nil, nil)
	for _, c := range []struct {
		h            http.Handler
		method, path string
	}{{s, "POST", "/v1/jobs"}, {s, "GET", "/dashboard/x"}, {noMetrics, "POST", "/metrics"}, {noMetrics, "GET", "/metrics"}} {
		if resp, body := opsDo(t, c.h, c.method, c.path, "Bearer "+opsKey); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s: %d %s, want 404", c.method, c.path, resp.StatusCode, body)
		}
	}
	if _, body := opsDo(t, noMetrics, "GET", "/nothing", "Bearer "+opsKey); strings.Contains(body, "/metrics") {
		t.Errorf("the 404 of a listener without metrics lists /metrics: %s", body)
	}
}

// A query parameter an operator endpoint does not take is refused (400,
// naming it and the ones taken), as GET /v1/jobs does: ?providers=x (a typo of
// provider) listed every provider's results, unfiltered. Found by review.
func TestUnknownQueryParameterRefused(t *testing.T) {
	db := testdb.New(t, store.Options{})
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "# metrics\n") })
	s := ops.New(ops.Config{Key: opsKey, Metrics: metrics}, db.Store, nil, nil)
	for _, c := range []struct {
		path  string
		names []string // the detail names them all
	}{
		{"/v1/conformance?providers=x", []string{`"providers"`, "provider, prompt, details"}},
		{"/v1/conformance?provider=x&detail=true", []string{`"detail"`, "provider, prompt, details"}},
		{"/v1/conformance?provider=a&provider=b", []string{"provider", "more than once"}},
		{"/v1/conformance?provider=%zz", []string{"cannot be decoded"}},
		{"/v1/providers?provider=x", []string{`"provider"`, "takes no query parameter"}},
		{"/dashboard?refresh=10", []string{`"refresh"`, "takes no query parameter"}},
	} {
		resp, body := opsDo(t, s, "GET", c.path, "Bearer "+opsKey)
		var p struct{ Detail string }
		_ = json.Unmarshal([]byte(body), &p)
		ok := resp.StatusCode == http.StatusBadRequest
		for _, n := range c.names {
			ok = ok && strings.Contains(p.Detail, n)
		}
		if !ok {
			t.Errorf("GET %s: %d %s, want 400 naming %q", c.path, resp.StatusCode, body, c.names)
		}
	}
	// What the endpoints take still works; /metrics ignores a scraper's own
	// parameters.
	for _, path := range []string{"/v1/conformance?provider=x&prompt=triage&details=true", "/v1/conformance", "/v1/providers",
		"/dashboard", "/metrics?module=router&match%5B%5D=up"} {
		if resp, body := opsDo(t, s, "GET", path, "Bearer "+opsKey); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %s, want 200", path, resp.StatusCode, body)
		}
	}
}

// GET /v1/providers shows each breaker's exclusions (attempts it admitted
// but did not count), which the replicas publish. Found by review.
func TestProvidersShowBreakerExclusions(t *testing.T) {
	db := testdb.New(t, store.Options{})
	r := newOpsReplica(t, db, "replica-1", opsKey, nil)
	for _, o := range []race.Outcome{race.OutcomeIgnore, race.OutcomeIgnore, race.OutcomeSuccess} {
		release, ok, why := r.set.Admit("primary")
		if !ok {
			t.Fatal(why)
		}
		release(o)
	}
	if err := r.pub.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", r.srv.URL+"/v1/providers", nil)
	req.Header.Set("Authorization", "Bearer "+opsKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reply struct {
		Providers []struct {
			Name     string           `json:"name"`
			Breakers []map[string]any `json:"breakers"`
		} `json:"providers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
		t.Fatal(err)
	}
	for _, p := range reply.Providers {
		if p.Name == "primary" {
			if len(p.Breakers) != 1 || p.Breakers[0]["exclusions"] != float64(2) || p.Breakers[0]["requests"] != float64(3) {
				t.Fatalf("primary's breakers %v, want one with requests 3 and exclusions 2", p.Breakers)
			}
			return
		}
	}
	t.Fatalf("no primary in %+v", reply)
}

// replicaBreaker is the dashboard's breaker line of a replica for a provider.
func replicaBreaker(t *testing.T, page, provider, replica string) string {
	t.Helper()
	i := strings.Index(page, `data-provider="`+provider+`"`)
	if i < 0 {
		t.Fatalf("no provider %s on the dashboard", provider)
	}
	row := page[i:]
	row = row[:strings.Index(row, "</tr>")]
	j := strings.Index(row, `data-replica="`+replica+`"`)
	if j < 0 {
		t.Fatalf("no replica %s in provider %s's row: %s", replica, provider, row)
	}
	line := row[j:]
	return line[:strings.Index(line, "</span></span>")]
}

// An open breaker's counts are all 0 (gobreaker clears them on every state
// change, and an open breaker admits nothing): the dashboard said "0
// consecutive failures" of a breaker that had just opened on failures. It
// no longer prints counts for an open breaker (the "Eligible here" reason
// says what opened this replica's). Found by review.
func TestDashboardOpenBreakerShowsNoZeroFailures(t *testing.T) {
	db := testdb.New(t, store.Options{})
	r := newOpsReplica(t, db, "replica-1", "", nil)
	for range 2 {
		release, ok, why := r.set.Admit("primary")
		if !ok {
			t.Fatal(why)
		}
		release(race.OutcomeFailure)
	}
	if err := r.pub.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	page := getPage(t, r.srv.URL+"/dashboard")
	if line := replicaBreaker(t, page, "primary", "replica-1"); !strings.Contains(line, `data-state="open"`) || strings.Contains(line, "consecutive failures") {
		t.Errorf("the open breaker's line: %s; want no consecutive failures count", line)
	}
	if !strings.Contains(page, "circuit breaker open after 2 consecutive failures") {
		t.Errorf("the dashboard does not say what opened the breaker")
	}
	if line := replicaBreaker(t, page, "fallback", "replica-1"); !strings.Contains(line, "0 consecutive failures") {
		t.Errorf("the closed breaker's line: %s; want its consecutive failures", line)
	}
}

func getPage(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// The dashboard's cost tiles show only with priced targets (or when the last
// hour cost something): without prices they said "$0.0000 spent". The
// latency a hedge bought shows only with keep_losers: without it the primary
// a hedge beat is cancelled and counts 0, so the tile always said 0ms. Found
// by review.
func TestDashboardCostTilesNeedPricesAndLatencyKeepLosers(t *testing.T) {
	db := testdb.New(t, store.Options{})
	page := func(cfg ops.Config) string {
		srv := httptest.NewServer(ops.New(cfg, db.Store, nil, nil))
		defer srv.Close()
		return getPage(t, srv.URL+"/dashboard")
	}
	const spent, latency = "<span>spent</span>", "latency bought per hedge win"
	if p := page(ops.Config{}); strings.Contains(p, spent) || strings.Contains(p, latency) || strings.Contains(p, `id="cost"`) {
		t.Errorf("without prices or keep_losers the dashboard shows cost tiles:\n%s", costSection(p))
	}
	if p := page(ops.Config{Priced: true}); !strings.Contains(p, spent) || !strings.Contains(p, "cost of hedging") || strings.Contains(p, latency) {
		t.Errorf("priced, without keep_losers: want the money tiles and no latency tile:\n%s", costSection(p))
	}
	if p := page(ops.Config{KeepLosers: true}); strings.Contains(p, spent) || !strings.Contains(p, latency) {
		t.Errorf("with keep_losers, unpriced: want the latency tile only:\n%s", costSection(p))
	}
	// Money recorded in the last hour shows even when this replica prices
	// nothing (another replica's configuration, a price removed since).
	ctx := context.Background()
	j, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "cost",
		Fingerprint: []byte{1}, PromptVersion: "2", Route: "default", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.Store.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "primary", Role: store.RolePrimary,
		LeaseOwner: "x", Price: &store.Price{InputPerMTok: 1, OutputPerMTok: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Store.MarkAttemptRunning(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	usage := map[string]int{"prompt_tokens": 100000, "completion_tokens": 0, "total_tokens": 100000}
	if err := db.Store.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed, Usage: usage}); err != nil {
		t.Fatal(err)
	}
	if p := page(ops.Config{}); !strings.Contains(p, "<b>$0.1000</b>"+spent) {
		t.Errorf("money spent in the last hour, unpriced here: want it shown:\n%s", costSection(p))
	}
}

func costSection(page string) string {
	if i := strings.Index(page, `<section id="counters">`); i >= 0 {
		page = page[i:]
	}
	if i := strings.Index(page, "</section>"); i >= 0 {
		page = page[:i]
	}
	return page
}
