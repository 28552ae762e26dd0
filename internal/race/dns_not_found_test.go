package race_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// outcomes is an admission that admits every target and keeps what the race
// reports to each target's breaker.
type outcomes struct {
	mu  sync.Mutex
	got map[string][]race.Outcome
}

func (o *outcomes) Admit(p string) (func(race.Outcome), bool, string) {
	return func(out race.Outcome) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.got[p] = append(o.got[p], out)
	}, true, ""
}

func (o *outcomes) of(p string) []race.Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]race.Outcome(nil), o.got[p]...)
}

// dnsFailing is an OpenAI adapter whose every connection fails on the
// lookup of its host with dnsErr, counting the dials.
func dnsFailing(t *testing.T, dnsErr *net.DNSError, dials *atomic.Int32) providers.Provider {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		dials.Add(1)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: dnsErr}
	}}}
	p, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "primary", BaseURL: "http://vllm-retired.internal/v1",
		APIKey: "sk-test", Model: "m", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A target whose host name does not exist (a self-hosted service renamed or
// retired, the configuration unchanged) is misconfigured: the race fails
// over at once, without the target's retries, and counts the attempt
// against its breaker. It was connection_refused, retried max_retries times
// on a name that will not come back. A lookup that failed for the moment (a
// resolver that timed out or answered SERVFAIL) is still retried.
func TestHostThatDoesNotResolveFailsOverWithoutRetries(t *testing.T) {
	for name, c := range map[string]struct {
		dnsErr    *net.DNSError
		kind      providers.Kind
		wantDials int32
	}{
		"no such host": {&net.DNSError{Err: "no such host", Name: "vllm-retired.internal", IsNotFound: true},
			providers.KindMisconfigured, 1},
		"server misbehaving": {&net.DNSError{Err: "server misbehaving", Name: "vllm-retired.internal", IsTemporary: true},
			providers.KindConnRefused, 3},
	} {
		t.Run(name, func(t *testing.T) {
			var dials atomic.Int32
			adm := &outcomes{got: map[string][]race.Outcome{}}
			b := racetest.New(t, racetest.Options{Route: race.Route{}, Admission: adm, Providers: []racetest.Provider{
				{Name: "primary", Adapter: dnsFailing(t, c.dnsErr, &dials), MaxRetries: 2},
				{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
			}})
			j := b.WaitSettled(t, b.Submit(t).ID)
			b.Stop()
			f := racetest.AttemptOn(j, "fallback")
			if j.State != store.JobSucceeded || f == nil || f.Role != store.RoleFailover {
				t.Fatalf("job %s, attempts %+v: want the fallback's win as a failover", j.State, j.Attempts)
			}
			if got := dials.Load(); got != c.wantDials {
				t.Errorf("primary dialled %d times, want %d", got, c.wantDials)
			}
			var e struct {
				Kind    string `json:"kind"`
				Message string `json:"message"`
			}
			for _, a := range j.Attempts {
				if a.Provider != "primary" {
					continue
				}
				if err := json.Unmarshal(a.Error, &e); err != nil || e.Kind != string(c.kind) {
					t.Errorf("primary's attempt error %s: want kind %s", a.Error, c.kind)
				}
			}
			for _, out := range adm.of("primary") {
				if out != race.OutcomeFailure {
					t.Errorf("primary's breaker heard %v, want failures only (%v)", adm.of("primary"), race.OutcomeFailure)
				}
			}
			if len(adm.of("primary")) == 0 {
				t.Errorf("primary's breaker heard nothing")
			}
		})
	}
}
