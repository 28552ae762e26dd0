package main

import (
	"context"
	"fmt"
	"net"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
)

func runServe(ctx context.Context, args []string) error {
	fs := newFlags("serve", "router serve [--config router.yaml]",
		"Runs the router's HTTP API. Without database_url or DATABASE_URL it starts the embedded local PostgreSQL.")
	cfgPath := configFlag(fs)
	if err := parse(fs, args); err != nil || fs.Parsed() && fs.NArg() > 0 {
		return errUsage
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	srv, err := server.New(ctx, cfg, server.Options{})
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (change `listen` in the config)", cfg.Listen, err)
	}
	return srv.Serve(ctx, ln)
}
