package main

import (
	"context"
	"fmt"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
)

func runMigrate(ctx context.Context, args []string) error {
	fs := newFlags("migrate", "router migrate [--config router.yaml]",
		"Applies the embedded SQL migrations under an advisory lock; safe to run from several replicas at once.")
	cfgPath := configFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	pool, closeDB, err := openDatabase(ctx, cfg, newLogger(cfg.Log))
	if err != nil {
		return err
	}
	defer closeDB()
	applied, err := store.New(pool, store.Options{}).Migrate(ctx)
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
}
