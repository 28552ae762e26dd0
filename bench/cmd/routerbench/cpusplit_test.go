package main

import "testing"

func TestParseProcStat(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	total, busy, err := parseProcStat("cpu  100 5 50 800 20 3 2 0 40 0\ncpu0 50 2 25 400 10 1 1 0 20 0\n")
	if err != nil {
		t.Fatal(err)
	}
	if total != 9.8 || busy != 1.6 { // 980 and 160 ticks: guest counted once, in user
		t.Fatalf("total %v busy %v, want 9.8 and 1.6", total, busy)
	}
	if _, _, err := parseProcStat("intr 1 2 3\n"); err == nil {
		t.Fatal("a /proc/stat without the cpu line parsed")
	}
}

func TestParsePidStat(t *testing.T) {
	stat := "4242 (postgres: bench (x) idle) S 1 4242 4242 0 -1 4194560 500 0 0 0 123 45 0 0 20 0 1 0 100 1000 50\n"
	comm, secs, ok := parsePidStat(stat)
	if !ok || comm != "postgres: bench (x) idle" || secs != 1.68 {
		t.Fatalf("got %q %v %v, want the name with its parentheses and 1.68 s", comm, secs, ok)
	}
	if _, _, ok := parsePidStat("4242 (short) S 1 2"); ok {
		t.Fatal("a truncated stat line parsed")
	}
}

func TestPgBackground(t *testing.T) {
	for title, want := range map[string]bool{
		"postgres: checkpointer \x00":                                   true,
		"postgres: autovacuum worker router\x00":                        true,
		"postgres: walwriter ":                                          true,
		"/usr/lib/postgresql/15/bin/postgres\x00-D\x00/tmp/pg\x00":      true,
		"postgres: postgres router 127.0.0.1(51234) idle\x00":           false,
		"postgres: postgres router 127.0.0.1(51234) INSERT waiting\x00": false,
	} {
		if got := pgBackground(title); got != want {
			t.Errorf("pgBackground(%q) = %v, want %v", title, got, want)
		}
	}
}

// A postgres process that exits between two samples counts nothing (not minus
// its earlier CPU), one that starts between them all of its CPU.
func TestSubCountsProcessesThatCameAndWent(t *testing.T) {
	var before, after CPUSplit
	before.addProc(10, pgProc{secs: 5})                   // a backend
	before.addProc(11, pgProc{secs: 3, background: true}) // an autovacuum worker that exits
	after.addProc(10, pgProc{secs: 5.5})
	after.addProc(12, pgProc{secs: 0.25, background: true}) // a new one
	d := after.Sub(before)
	if d.Postgres != 0.75 || d.PostgresBackground != 0.25 {
		t.Fatalf("postgres %v background %v, want 0.75 and 0.25", d.Postgres, d.PostgresBackground)
	}
}
