package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestCompareOrderAlternatesABBA(t *testing.T) {
	got := strings.Join(compareOrder(2), ",")
	if want := "base,head,head,base"; got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
	// Each side runs as often in every position of a pair, so a linear drift
	// over the whole run costs both the same.
	order := compareOrder(4)
	var baseAt, headAt int
	for i, s := range order {
		if s == "base" {
			baseAt += i
		} else {
			headAt += i
		}
	}
	if baseAt != headAt {
		t.Fatalf("positions sum to %d for base and %d for head in %v", baseAt, headAt, order)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is not NaN")
	}
}

func TestWithDatabase(t *testing.T) {
	got, err := withDatabase("postgres://postgres@127.0.0.1:5432/router?sslmode=disable", "cmp_1_base")
	if err != nil || got != "postgres://postgres@127.0.0.1:5432/cmp_1_base?sslmode=disable" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := withDatabase("host=127.0.0.1 dbname=router", "cmp_1_base"); err == nil {
		t.Fatal("a keyword/value connection string was taken for a URL")
	}
}

// The default and every accepted round count give both sides the same
// positions; an odd count is refused before anything runs.
func TestCompareRoundsMustBeEven(t *testing.T) {
	for _, rounds := range []int{0, 1, 3} {
		b := &Bench{o: Options{Compare: "HEAD", CompareRounds: rounds}}
		if err := b.compare(t.Context()); err == nil || !strings.Contains(err.Error(), "even") {
			t.Errorf("%d rounds: err %v, want a refusal naming even counts", rounds, err)
		}
	}
}

// compareRow is a compare run of 1,000 /v1/jobs requests at 64 callers whose
// router, PostgreSQL backends, PostgreSQL background and harness spent the
// given CPU (ms per job, and seconds in all for the last two).
func compareRow(rps, routerMS, pgMS, bgSecs, benchSecs float64) OverheadRow {
	n := 1000
	return OverheadRow{Endpoint: "jobs", Callers: 64, N: n, RPS: rps, Added: newDist([]time.Duration{10 * time.Millisecond}),
		HaveCounter: true, PerJob: RouterCounters{CPUSeconds: routerMS / 1000},
		CPU: &CPUSplit{Total: 20, Busy: 18, Postgres: pgMS * float64(n) / 1000, PostgresBackground: bgSecs, Bench: benchSecs}}
}

// compareReport is section 9 of a report of runs, head named head.
func compareReport(head string, runs ...CompareRun) string {
	return compareReportChunks(head, 1, runs...)
}

// compareReportChunks is compareReport for a mock streaming in chunks.
func compareReportChunks(head string, chunks int, runs ...CompareRun) string {
	b := &Bench{}
	b.rep.Compare = &CompareResult{Base: "abc1234", Head: head, Endpoint: "jobs", Callers: 64, N: 1000, Chunks: chunks, Runs: runs}
	var m md
	b.writeCompare(&m)
	return m.String()
}

// The report gives every run in order and each side's medians, with the
// change of the head against the base.
func TestWriteCompare(t *testing.T) {
	row := func(rps, routerMS, pgMS float64) OverheadRow { return compareRow(rps, routerMS, pgMS, 0.05, 0.3) }
	out := compareReport("this tree at def5678",
		CompareRun{"base", row(1000, 0.70, 0.50)}, CompareRun{"head", row(1100, 0.70, 0.40)},
		CompareRun{"head", row(1200, 0.60, 0.40)}, CompareRun{"base", row(1000, 0.70, 0.50)})
	reportHas(t, out,
		"## 9. Before and after: this tree at def5678 against abc1234",
		"| 2 | head | 1100 | 0 | 10.0 | 10.0 | 0.70 | 0.40 | 0.05 | 0.30 | 90% |",
		"| req/s | 1000 | 1150 | +15.0% |",
		"| router CPU per job (ms) | 0.70 | 0.65 | -7.1% |",
		"| PostgreSQL CPU per job (ms) | 0.50 | 0.40 | -20.0% |",
	)
	if strings.Contains(out, "chunks") {
		t.Errorf("a one-chunk comparison mentions chunks:\n%s", out)
	}
	// With -compare-chunks, the section says how the answers were streamed.
	out = compareReportChunks("this tree at def5678", 100,
		CompareRun{"base", row(1000, 0.70, 0.50)}, CompareRun{"head", row(1100, 0.70, 0.40)})
	reportHas(t, out, "the mock at its fixed latency, streaming each answer's content in 100 chunks (`-compare-chunks`")
}

// A machine running at half speed for the head's runs doubles every process's
// CPU per job; the rows in the harness's unit show the router and PostgreSQL
// unchanged.
func TestCompareRatiosCancelTheMachinesDrift(t *testing.T) {
	row := func(slow float64) OverheadRow { return compareRow(1000, slow*0.70, slow*0.50, slow*0.05, slow*0.30) }
	out := compareReport("def5678",
		CompareRun{"base", row(1)}, CompareRun{"head", row(2)}, CompareRun{"head", row(2)}, CompareRun{"base", row(1)})
	reportHas(t, out,
		"| router CPU per job (ms) | 0.70 | 1.40 | +100.0% |",
		"| router CPU ÷ load generator + mock CPU | 2.33 | 2.33 | +0.0% |",
		"| PostgreSQL backends' CPU ÷ load generator + mock CPU | 1.50 | 1.50 | +0.0% |",
	)
}

// reportHas fails t for each line of want that the report out lacks.
func reportHas(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("report lacks %q:\n%s", w, out)
		}
	}
}
