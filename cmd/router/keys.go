package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
)

const keysUsage = `router keys create --owner NAME [--webhook-url URL] [--config router.yaml]
       router keys list [--config router.yaml]
       router keys revoke ID [--config router.yaml]`

func runKeys(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "router keys: which subcommand? create, list or revoke\n\nUsage: "+keysUsage)
		return errUsage
	}
	if isHelp(args[0]) {
		fmt.Fprintln(os.Stderr, "Usage: "+keysUsage+"\n\nRun `router keys SUBCOMMAND --help` for a subcommand's flags.")
		return errHelpShown
	}
	switch args[0] {
	case "create":
		return keysCreate(ctx, args[1:])
	case "list":
		return keysList(ctx, args[1:])
	case "revoke":
		return keysRevoke(ctx, args[1:])
	}
	fmt.Fprintf(os.Stderr, "router keys: unknown subcommand %q\n\nUsage: %s\n", args[0], keysUsage)
	return errUsage
}

func keysCreate(ctx context.Context, args []string) error {
	fs := newFlags("keys create", "router keys create --owner NAME [--webhook-url URL] [--config router.yaml]",
		"Creates an API key for an owner (tenant). The key is printed once; only its hash is stored.\n"+
			"With --webhook-url, the owner's job completion events go to that URL, signed with a new secret printed once.")
	owner := fs.String("owner", "", "the owner (tenant) the key authenticates as")
	hook := fs.String("webhook-url", "", "where the owner's job completion events are POSTed (https://...)")
	cfgPath := configFlag(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *owner == "" {
		return errors.New("--owner is required: the tenant this key belongs to")
	}
	if *hook != "" {
		if err := config.ValidateWebhookURL(*hook); err != nil {
			return fmt.Errorf("--webhook-url: %w", err)
		}
	}
	return server.WithStore(ctx, *cfgPath, func(_ *config.Config, st *store.Store) error {
		if _, err := st.Migrate(ctx); err != nil {
			return err
		}
		k, err := st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: *owner, WebhookURL: *hook})
		if err != nil {
			return err
		}
		if k.WebhookSecret == "" {
			fmt.Println(k.Key)
			return nil
		}
		fmt.Printf("key:            %s\nwebhook secret: %s\n", k.Key, k.WebhookSecret)
		fmt.Fprintln(os.Stderr, "Both are shown once. Verify each delivery's webhook-signature with the secret (see docs/api.md).")
		return nil
	})
}

func keysList(ctx context.Context, args []string) error {
	fs := newFlags("keys list", "router keys list [--config router.yaml]", "Lists stored API keys (never the keys themselves).")
	cfgPath := configFlag(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	return server.WithStore(ctx, *cfgPath, func(_ *config.Config, st *store.Store) error {
		keys, err := st.ListAPIKeys(ctx)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tOWNER\tPREFIX\tCREATED\tREVOKED\tWEBHOOK")
		for _, k := range keys {
			revoked, hook := "-", "-"
			if k.RevokedAt != nil {
				revoked = k.RevokedAt.UTC().Format(time.RFC3339)
			}
			if k.WebhookURL != nil {
				hook = *k.WebhookURL
			}
			fmt.Fprintf(w, "%d\t%s\t%s…\t%s\t%s\t%s\n", k.ID, k.Owner, k.Prefix, k.CreatedAt.UTC().Format(time.RFC3339), revoked, hook)
		}
		return w.Flush()
	})
}

func keysRevoke(ctx context.Context, args []string) error {
	fs := newFlags("keys revoke", "router keys revoke ID [--config router.yaml]",
		"Revokes a stored API key: every replica refuses it within auth.cache_ttl (default 5s).")
	cfgPath := configFlag(fs)
	if len(args) > 0 && isHelp(args[0]) {
		fs.Usage()
		return errHelpShown
	}
	// The ID comes first or after the flags; help anywhere stops before
	// anything is revoked.
	var idArg string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		idArg, args = args[0], args[1:]
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if idArg == "" && len(rest) > 0 {
		idArg, rest = rest[0], rest[1:]
	}
	if idArg == "" {
		fmt.Fprintln(fs.Output(), "router keys revoke: which key? Give its ID (the ID column of `router keys list`).")
		fs.Usage()
		return errUsage
	}
	if len(rest) > 0 {
		fmt.Fprintf(fs.Output(), "router keys revoke: unexpected argument %q: it revokes one key at a time; give one ID, or see `router keys revoke --help`\n", strings.Join(rest, " "))
		return errUsage
	}
	id, err := strconv.ParseInt(idArg, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not a key ID: use the ID column of `router keys list`", idArg)
	}
	return server.WithStore(ctx, *cfgPath, func(cfg *config.Config, st *store.Store) error {
		if err := st.RevokeAPIKey(ctx, id); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no stored key has ID %d: see `router keys list`", id)
			}
			return err
		}
		fmt.Printf("revoked key %d; every replica refuses it within %s\n", id, cfg.Auth.CacheTTL.D())
		return nil
	})
}
