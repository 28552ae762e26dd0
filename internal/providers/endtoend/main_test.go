package endtoend_test

import (
	"testing"

	"github.com/routerhq/router/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }
