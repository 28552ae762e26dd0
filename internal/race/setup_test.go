package race_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

const validTriage = racetest.ValidTriage
const otherTriage = `{"category":"account","priority":"normal","summary":"Primary's slower answer about the login.","needs_human":true}`

// bundle is the race engine under test (internal/racetest), with short names.
type bundle struct {
	*racetest.Bundle
	db       *testdb.DB
	st       *store.Store
	runner   *race.Runner
	listener *store.Listener
	prov     map[string]*providers.Scripted
}

// provSpec configures one scripted provider of the test route.
type provSpec struct {
	name       string
	respond    func(call int, req *providers.Request) providers.Step
	onCall     func(call int, req *providers.Request)
	timeout    time.Duration
	firstByte  time.Duration
	maxRetries int
	window     int
}

func setup(t *testing.T, route race.Route, specs ...provSpec) *bundle {
	t.Helper()
	return setupWith(t, route, nil, specs...)
}

// setupWith is setup with an admission control (a breaker stand-in).
func setupWith(t *testing.T, route race.Route, adm race.Admission, specs ...provSpec) *bundle {
	t.Helper()
	return setupObserved(t, route, adm, nil, specs...)
}

// setupObserved is setupWith with an observer.
func setupObserved(t *testing.T, route race.Route, adm race.Admission, obs race.Observer, specs ...provSpec) *bundle {
	t.Helper()
	var ps []racetest.Provider
	for _, s := range specs {
		ps = append(ps, racetest.Provider{Name: s.name, Respond: s.respond, OnCall: s.onCall, Timeout: s.timeout, FirstByteTimeout: s.firstByte, MaxRetries: s.maxRetries, ContextWindow: s.window})
	}
	rb := racetest.New(t, racetest.Options{Route: route, Providers: ps, Admission: adm, Observer: obs})
	return &bundle{Bundle: rb, db: rb.DB, st: rb.Store, runner: rb.Runner, listener: rb.Listener, prov: rb.Prov}
}

func (b *bundle) stop()                                          { b.Stop() }
func (b *bundle) submit(t *testing.T) *store.Job                 { return b.Submit(t) }
func (b *bundle) waitSettled(t *testing.T, id string) *store.Job { return b.WaitSettled(t, id) }
func (b *bundle) job(t *testing.T, id string) *store.Job         { return b.Job(t, id) }
func (b *bundle) submitWithoutRunning(t *testing.T, leaseOwner string) *store.Job {
	return b.Create(t, leaseOwner)
}

var (
	ok        = racetest.OK
	hang      = racetest.Hang
	attemptBy = racetest.AttemptOn
)
