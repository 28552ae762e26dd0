package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
)

func runJobs(ctx context.Context, args []string) error {
	if len(args) < 2 || args[0] != "get" || strings.HasPrefix(args[1], "-") {
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
	return server.WithStore(ctx, *cfgPath, func(_ *config.Config, st *store.Store) error {
		job, err := st.GetJobAny(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no job %s in this database", id)
		}
		if err != nil {
			return err
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(job)
	})
}
