package chaos_test

import (
	"testing"

	"github.com/routerhq/router/internal/testdb"
)

// routerBin is the router binary, built once with the race detector: a data
// race in a replica under faults ends it with a report, which the run counts
// as an unexpected exit.
var routerBin string

func TestMain(m *testing.M) { testdb.MainWithRouter(m, &routerBin) }
