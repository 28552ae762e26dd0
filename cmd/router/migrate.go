package main

import (
	"context"
	"fmt"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
)

func runMigrate(ctx context.Context, args []string) error {
	fs := newFlags("migrate", "router migrate [--config router.yaml]",
		"Applies the embedded SQL migrations under an advisory lock; safe to run from several replicas at once.")
	cfgPath := configFlag(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	return server.WithStore(ctx, *cfgPath, func(_ *config.Config, st *store.Store) error {
		applied, err := st.Migrate(ctx)
		if err != nil {
			return err
		}
		if len(applied) == 0 {
			fmt.Println("database is up to date")
		}
		for _, m := range applied {
			fmt.Println("applied", m)
		}
		return nil
	})
}
