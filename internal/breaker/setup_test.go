package breaker_test

import (
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

const validTriage = racetest.ValidTriage

// raceBundle is the race engine (internal/racetest) with an Admission.
type raceBundle struct {
	*racetest.Bundle
	prov map[string]*providers.Scripted
}

type provSpec struct {
	name    string
	respond func(call int, req *providers.Request) providers.Step
	onCall  func(call int, req *providers.Request)
}

func setupRace(t *testing.T, route race.Route, adm race.Admission, obs race.Observer, specs ...provSpec) *raceBundle {
	t.Helper()
	var ps []racetest.Provider
	for _, s := range specs {
		ps = append(ps, racetest.Provider{Name: s.name, Respond: s.respond, OnCall: s.onCall})
	}
	rb := racetest.New(t, racetest.Options{Route: route, Providers: ps, Admission: adm, Observer: obs})
	return &raceBundle{Bundle: rb, prov: rb.Prov}
}

func (b *raceBundle) submit(t *testing.T) *store.Job                 { return b.Submit(t) }
func (b *raceBundle) waitSettled(t *testing.T, id string) *store.Job { return b.WaitSettled(t, id) }

var ok = racetest.OK
