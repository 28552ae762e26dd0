package ops_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// countingConformance is a ConformanceSource that counts its reads.
type countingConformance struct {
	reads atomic.Int64
	cells []ops.ConformanceCell
}

func (c *countingConformance) ConformanceMatrix(context.Context) ([]ops.ConformanceCell, error) {
	c.reads.Add(1)
	return c.cells, nil
}

// A render of the dashboard reads the conformance results once, for both
// its providers table and its matrix. It read them twice (ListProviders,
// then the matrix), each a read of the conformance runs, every refresh of
// every open tab, within the render's one time budget.
func TestDashboardReadsConformanceOnce(t *testing.T) {
	db := testdb.New(t, store.Options{})
	src := &countingConformance{cells: []ops.ConformanceCell{{Provider: "primary", Model: "m", Prompt: "triage", PromptVersion: "2",
		Passed: true, Fresh: true, RanAt: time.Now(), Detail: "8/8 cases passed"}}}
	srv := httptest.NewServer(ops.New(ops.Config{Providers: []string{"primary"}, ConformanceMaxAge: time.Hour, Conformance: src},
		db.Store, nil, nil))
	defer srv.Close()

	page := getPage(t, srv.URL+"/dashboard")
	if n := src.reads.Load(); n != 1 {
		t.Errorf("one render of the dashboard read the conformance results %d times, want 1", n)
	}
	i := strings.Index(page, `<section id="conformance">`)
	if i < 0 || !strings.Contains(page[i:], "triage@2") || !strings.Contains(page[i:], `<span class="badge pass">pass</span>`) {
		t.Errorf("the matrix does not show the result read:\n%s", page)
	}

	before := src.reads.Load()
	getPage(t, srv.URL+"/v1/providers")
	if n := src.reads.Load() - before; n != 1 {
		t.Errorf("GET /v1/providers read the conformance results %d times, want 1", n)
	}
}
