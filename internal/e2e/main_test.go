package e2e_test

import (
	"testing"

	"github.com/routerhq/router/internal/testdb"
)

// routerBin is the router binary built once for the package's tests.
var routerBin string

func TestMain(m *testing.M) { testdb.MainWithRouter(m, &routerBin) }
