package ops

import (
	"context"
	"sync"
	"time"
)

// opsReadTimeout bounds the database reads behind an operator answer: each
// section of the dashboard, and GET /v1/providers and GET /v1/conformance.
// Without it a read sent on a connection a partition or a vanished primary
// has silenced waits until TCP gives up (some 15 minutes), the operator's
// curl or probe hanging, holding a pool connection, instead of getting the
// endpoint's own 503.
const opsReadTimeout = 5 * time.Second

// readAll runs reads at once, each under its own opsReadTimeout within ctx,
// and returns when all have: one that waits (a table locked by ALTER TABLE,
// VACUUM FULL or REINDEX) spends only its own bound, not the others', and
// the whole takes at most the bound. Each read keeps its own results and
// errors.
func readAll(ctx context.Context, reads ...func(ctx context.Context)) {
	var wg sync.WaitGroup
	for _, read := range reads {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, opsReadTimeout)
			defer cancel()
			read(ctx)
		})
	}
	wg.Wait()
}
