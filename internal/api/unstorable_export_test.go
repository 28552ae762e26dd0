package api

import (
	"testing"

	"github.com/routerhq/router/internal/jsontext"
)

// SkipNumberCheck lets every number through to the database until t ends, so
// a test sees what the API answers when PostgreSQL itself refuses a job's data
// (store.ErrUnstorable). checkNumbers is package state: only a test that runs
// alone (not t.Parallel) may call it.
func SkipNumberCheck(t *testing.T) {
	checkNumbers = func([]byte) *jsontext.NumberError { return nil }
	t.Cleanup(func() { checkNumbers = jsontext.CheckNumbers })
}
