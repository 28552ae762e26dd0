package race_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// An attempt the job's deadline cuts before a connection to the provider was
// made (the dial hangs: a provider unreachable in an outage) never sent its
// request: it is failed, not unknown, and the job fails instead of waiting
// for someone to resolve an attempt that cannot have done anything.
func TestDeadlineBeforeConnectionIsNotUnknown(t *testing.T) {
	dialing := make(chan struct{}, 1)
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		select {
		case dialing <- struct{}{}:
		default:
		}
		<-ctx.Done() // a SYN that is never answered
		return nil, ctx.Err()
	}}}
	adapter, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "primary", BaseURL: "http://provider.invalid/v1", APIKey: "sk-test",
		Model: "m", HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	// The deadline is long enough for the attempt to reach the dial on any
	// machine; cut before, it is rightly not sent, and never dials.
	b := racetest.New(t, racetest.Options{Route: race.Route{Deadline: 2 * time.Second},
		Providers: []racetest.Provider{{Name: "primary", Adapter: adapter, Timeout: time.Hour}}})
	job := b.Submit(t)
	select {
	case <-dialing:
	case <-time.After(hangBound):
		t.Fatal("the attempt never dialled")
	}
	j := b.WaitSettled(t, job.ID)
	if j.State != store.JobFailed || len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptFailed ||
		!strings.Contains(string(j.Attempts[0].Error), "not sent") {
		t.Fatalf("job %s, attempts %+v: want it failed, its attempt failed as never sent", j.State, j.Attempts)
	}
}
