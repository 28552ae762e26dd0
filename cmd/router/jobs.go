package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
)

func runJobs(ctx context.Context, args []string) error {
	if len(args) < 2 || args[0] != "get" {
		fmt.Fprintln(os.Stderr, "Usage: router jobs get ID [--config router.yaml]")
		return errUsage
	}
	id := args[1]
	fs := newFlags("jobs get", "router jobs get ID [--config router.yaml]",
		"Prints a job (any owner's: this is an operator command) with its attempts and race events as JSON.")
	cfgPath := configFlag(fs)
	if err := parse(fs, args[2:]); err != nil {
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
	job, err := store.New(pool, store.Options{}).GetJobAny(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no job %s in this database", id)
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(job)
}
