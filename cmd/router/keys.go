package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
)

func runKeys(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "create" {
		fmt.Println("Usage: router keys create --owner NAME [--config router.yaml]")
		return errUsage
	}
	fs := newFlags("keys create", "router keys create --owner NAME [--config router.yaml]",
		"Creates an API key for an owner (tenant). The key is printed once; only its hash is stored.")
	owner := fs.String("owner", "", "the owner (tenant) the key authenticates as")
	cfgPath := configFlag(fs)
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if *owner == "" {
		return errors.New("--owner is required: the tenant this key belongs to")
	}
	return server.WithStore(ctx, *cfgPath, func(_ *config.Config, st *store.Store) error {
		if _, err := st.Migrate(ctx); err != nil {
			return err
		}
		key, err := st.CreateAPIKey(ctx, *owner)
		if err != nil {
			return err
		}
		fmt.Println(key)
		return nil
	})
}
