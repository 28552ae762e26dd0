package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A cached standing's pass ages from before the database read (when
// LastPassAge was measured), not from after it: otherwise each cached
// decision undercounts the age by the read's duration (up to readTimeout) and
// a pass is admitted past conformance.max_age.
func TestGateCachedAgeCountsFromBeforeTheRead(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if _, err := db.Store.RecordConformanceRun(ctx, store.NewConformanceRun{Provider: "fb", Model: "m", Prompt: "triage",
		PromptVersion: "2", Passed: true, CasesTotal: 1, CasesPassed: 1, PromptDigest: strings.Repeat("a", 64), TargetDigest: strings.Repeat("b", 64)}); err != nil {
		t.Fatal(err)
	}
	// The gate's clock: the first reading is when the first decision starts
	// its database read; any later one is after that read, which took 4s,
	// until the second decision, 8s after the read started.
	base, later, readings := time.Now(), 4*time.Second, 0
	g := NewGate(db.Store, GateFallbacks, 6*time.Second, CacheFor(time.Hour))
	g.now = func() time.Time {
		readings++
		if readings == 1 {
			return base
		}
		return base.Add(later)
	}
	p := &prompt.Prompt{Name: "triage", Version: "2", Model: "m"}
	if ok, why := g.Allow(ctx, "fb", p, store.RoleFailover); !ok {
		t.Fatalf("fresh pass refused: %s", why)
	}
	later = 8 * time.Second
	if ok, _ := g.Allow(ctx, "fb", p, store.RoleFailover); ok {
		t.Fatal("a pass at least 8s old was admitted with conformance.max_age 6s")
	}
}
