package api

import "testing"

// SetListScan makes every page of GET /v1/jobs filtered by state or operation
// examine at most n jobs until t ends. listScan is package state: only a test
// that runs alone (not t.Parallel) may set it.
func SetListScan(t testing.TB, n int) {
	before := listScan
	listScan = n
	t.Cleanup(func() { listScan = before })
}
