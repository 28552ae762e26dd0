package conformance

import (
	"context"
	"time"

	"github.com/routerhq/router/internal/store"
)

// WatchGateReads makes each database read of g first report, to seen, how
// many reads g has been asked for and not finished (its reads in flight, this
// one included), and bounds each read by timeout (readTimeout's seam): for
// the tests of package conformance_test.
func WatchGateReads(g *Gate, timeout time.Duration, seen func(inFlight int)) {
	read := g.read
	g.readTimeout = timeout
	g.read = func(ctx context.Context, provider, model, name, version string, maxAge time.Duration) (*store.ConformanceStanding, error) {
		g.mu.Lock()
		n := len(g.flights)
		g.mu.Unlock()
		seen(n)
		return read(ctx, provider, model, name, version, maxAge)
	}
}
