package server

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
)

// A router with no database configured refuses to start, saying how to set
// one, rather than quietly running on a private embedded database of its own
// (a deployment that lost its DATABASE_URL would keep jobs and idempotency
// keys apart from the other replicas'). The embedded database is chosen
// explicitly: `database_url: embedded`.
func TestNoDatabaseConfiguredIsRefused(t *testing.T) {
	pool, closeFn, err := OpenDatabase(context.Background(), &config.Config{}, slog.New(slog.DiscardHandler))
	if pool != nil || closeFn != nil || !errors.Is(err, errNoDatabase) ||
		!strings.Contains(err.Error(), "DATABASE_URL") || !strings.Contains(err.Error(), "database_url: embedded") {
		t.Fatalf("OpenDatabase without a database: %v; want refused, naming DATABASE_URL and database_url: embedded", err)
	}
}
