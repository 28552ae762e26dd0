package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/netredact"
	"github.com/routerhq/router/internal/store"
)

// keysForgetRemovedWebhook is `router keys forget-removed-webhook`: the
// operator's way out of the place a configured webhook removed on purpose
// keeps for its redelivery window (store.ForgetRemovedWebhook).
func keysForgetRemovedWebhook(ctx context.Context, args []string) error {
	fs := newFlags("keys forget-removed-webhook", "router keys forget-removed-webhook --owner NAME [--config router.yaml]",
		"Ends, for one owner, the wait after its configured webhook (api_keys[].webhook) was removed: a router replica started\n"+
			"without it keeps its place for the redelivery window (about a day), in case a rolling update brings it back, and\n"+
			"meanwhile the owner's events wait undelivered, and `keys create --webhook-url` and `keys rotate-webhook-secret` are refused.\n"+
			"When the webhook was removed on purpose, this forgets it: the owner's newest unrevoked key made with --webhook-url, if any,\n"+
			"takes the owner's events at once (the waiting ones too), and a key's webhook can be set or rotated again.\n"+
			"A router replica whose configuration still sets the owner's webhook takes the owner back when it starts.")
	owner := fs.String("owner", "", "the owner (tenant) whose removed configured webhook to forget")
	cfgPath := configFlag(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *owner == "" {
		return usagef("--owner is required: the tenant whose removed configured webhook to forget (see `router keys forget-removed-webhook --help`)")
	}
	if strings.TrimSpace(*owner) == "" {
		return usagef("--owner %q is blank: give the owner (tenant) whose removed configured webhook to forget, e.g. --owner acme", *owner)
	}
	// Checked before prepareSchema migrates anything: not UTF-8, it would
	// reach PostgreSQL as an encoding error (exit 1).
	if err := config.ValidateOwner(*owner); err != nil {
		return usagef("--owner: %v", err)
	}
	return withStore(ctx, *cfgPath, func(cfg *config.Config, st *store.Store) error {
		if err := prepareSchema(ctx, cfg, st, *cfgPath); err != nil {
			return err
		}
		f, err := st.ForgetRemovedWebhook(ctx, *owner)
		switch {
		case errors.Is(err, store.ErrNoRemovedWebhook):
			return fmt.Errorf("owner %q has no removed configured webhook whose place is kept (none was removed by a replica's start in the last redelivery window, "+
				"or the configuration of a running router sets it again), so nothing was changed: see `router keys list` for its keys' webhooks", *owner)
		case err != nil:
			return keyChangeErr(ctx, err)
		}
		var out report
		change := fmt.Sprintf("owner %s's removed configured webhook was forgotten; the owner has no webhook now", *owner)
		if f.URL != "" {
			shown := netredact.WebhookURLText(f.URL)
			change = fmt.Sprintf("owner %s's removed configured webhook was forgotten; its events now go to %s (key %d's webhook)", *owner, shown, f.KeyID)
			out.printf("owner %s: removed configured webhook forgotten; its events now go to %s (key %d's webhook)\n", *owner, shown, f.KeyID)
		} else {
			out.printf("owner %s: removed configured webhook forgotten; the owner has no webhook now\n", *owner)
		}
		fmt.Fprintf(os.Stderr, "The configured webhook was removed by a replica's start at %s; its place would have been kept until %s. "+
			"A router replica whose configuration sets owner %s's api_keys[].webhook takes the owner back when it starts: "+
			"remove it from every replica's configuration.\n", f.RemovedAt.UTC().Format(time.RFC3339), f.RemovedUntil.UTC().Format(time.RFC3339), *owner)
		if f.URL == "" {
			fmt.Fprintf(os.Stderr, "The events of its jobs that end from now on are not recorded; those already waiting are retried until they are webhooks.retry_for old, "+
				"then abandoned; give it a webhook with `router keys create --owner %s --webhook-url URL`.\n", *owner)
		}
		return out.done(change)
	})
}
