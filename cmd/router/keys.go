package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/netredact"
	"github.com/routerhq/router/internal/store"
)

const keysUsage = `router keys create --owner NAME [--webhook-url URL] [--config router.yaml]
       router keys list [--config router.yaml]
       router keys revoke ID [--no-wait] [--config router.yaml]
       router keys rotate-webhook-secret --owner NAME [--overlap 24h] [--config router.yaml]
       router keys forget-removed-webhook --owner NAME [--config router.yaml]`

func runKeys(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "router keys: which subcommand? create, list, revoke, rotate-webhook-secret or forget-removed-webhook\n\nUsage: "+keysUsage)
		return errUsage
	}
	if len(args) == 2 && isHelp(args[0]) && slices.Contains(subcommands["keys"], args[1]) {
		return runKeys(ctx, []string{args[1], "--help"}) // `router keys help create`: create's, as `router help keys create`
	}
	if isHelp(args[0]) {
		fmt.Fprintln(os.Stdout, "Usage: "+keysUsage+"\n\nRun `router keys SUBCOMMAND --help` for a subcommand's flags.")
		return errHelpShown
	}
	switch args[0] {
	case "create":
		return keysCreate(ctx, args[1:])
	case "list":
		return keysList(ctx, args[1:])
	case "revoke":
		return keysRevoke(ctx, args[1:])
	case "rotate-webhook-secret":
		return keysRotateWebhookSecret(ctx, args[1:])
	case "forget-removed-webhook":
		return keysForgetRemovedWebhook(ctx, args[1:])
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
		return usagef("--owner is required: the tenant this key belongs to (see `router keys create --help`)")
	}
	if strings.TrimSpace(*owner) == "" { // `--owner " "`: said as blank, not as an owner holding white space
		return usagef("--owner %q is blank: give the owner (tenant) this key belongs to, e.g. --owner acme", *owner)
	}
	if err := config.ValidateOwner(*owner); err != nil {
		return usagef("--owner: %v", err)
	}
	// An empty --webhook-url (a shell variable that was not set) would
	// create a key without a webhook while the operator thinks it has one.
	hookGiven := false
	fs.Visit(func(f *flag.Flag) { hookGiven = hookGiven || f.Name == "webhook-url" })
	if hookGiven && strings.TrimSpace(*hook) == "" {
		return usagef("--webhook-url is empty: give the https:// URL the owner's job completion events go to, or leave --webhook-url out to create a key without a webhook")
	}
	if *hook != "" {
		if err := config.ValidateWebhookURL(*hook); err != nil {
			return usagef("--webhook-url: %v", err) // the command line is wrong: exit 2, as for any bad flag value
		}
	}
	what := "the new key"
	if *hook != "" {
		what = "the new key with its webhook secret"
	}
	if err := shownOnceToNull(what); err != nil {
		return err
	}
	return withStore(ctx, *cfgPath, func(cfg *config.Config, st *store.Store) error {
		if err := configuredWebhook(cfg, *owner, *hook); err != nil {
			return err
		}
		if err := prepareSchema(ctx, cfg, st, *cfgPath); err != nil {
			return err
		}
		// The key is printed inside the transaction that stores it: one that
		// could not be printed (stdout on a full disk, a closed pipe) is
		// rolled back, rather than left in `keys list` as a key nobody has.
		var printErr error
		var k store.CreatedAPIKey
		printed := false
		_, err := st.CreateAPIKeyWith(ctx, store.NewAPIKey{Owner: *owner, WebhookURL: *hook, Show: func(created store.CreatedAPIKey) error {
			k = created
			shown := k.Key + "\n"
			if k.WebhookSecret != "" {
				shown = fmt.Sprintf("key:            %s\nwebhook secret: %s\n", k.Key, k.WebhookSecret)
			}
			if _, printErr = io.WriteString(os.Stdout, shown); printErr != nil {
				return printErr
			}
			printed = true
			return nil
		}})
		// The configuration of a running router may set the owner's webhook
		// even when this one does not (configuredWebhook): checked as the
		// key is stored.
		if configured := (*store.ConfiguredWebhookError)(nil); errors.As(err, &configured) && configured.RemovedAt != nil {
			// The message says what to do (finish the rolling update, or wait).
			return fmt.Errorf("--webhook-url: %w. No key was created; to create one without a webhook, drop --webhook-url", configured)
		}
		if configured := (*store.ConfiguredWebhookError)(nil); errors.As(err, &configured) {
			return fmt.Errorf("--webhook-url: %w: the new key's webhook would never be called and its secret would sign nothing, so no key was created; "+
				"change or remove owner %s's api_keys[].webhook in the running router's configuration (it applies when the router restarts), "+
				"or drop --webhook-url to create a key without a webhook", configured, *owner)
		}
		switch {
		case printErr != nil:
			return fmt.Errorf("could not print the new key (%v), so it was rolled back: no key was created; run the command again with a stdout that can be written", printErr)
		case printed && err != nil:
			if err := uncommittedKey(ctx, st, k, err); err != nil {
				return err
			}
		case err != nil:
			return keyChangeErr(ctx, err)
		}
		if k.WebhookSecret != "" {
			fmt.Fprintln(os.Stderr, "Both are shown once. Verify each delivery's webhook-signature with the secret (see docs/api.md).")
		}
		if k.ReplacedWebhookURL != "" && k.ReplacedWebhookURL == *hook {
			fmt.Fprintf(os.Stderr, "warning: owner %s's webhook %s is now signed with the new secret, no longer with the older key's: "+
				"give its receiver the new secret now, or deliveries fail verification there.\n", *owner, netredact.WebhookURLText(*hook))
		} else if k.ReplacedWebhookURL != "" {
			// The newest hooked key's webhook is the owner's: say whose
			// events this create moved, as revoke says what it changed.
			// A URL shown shortened (its path may be its credential) is
			// not repeated as the flag's value.
			replaced, again := netredact.WebhookURLText(k.ReplacedWebhookURL), "--webhook-url "+k.ReplacedWebhookURL
			if replaced != k.ReplacedWebhookURL {
				again = "--webhook-url set to that URL (shown shortened: its path may be the receiver's credential)"
			}
			fmt.Fprintf(os.Stderr, "warning: owner %s's job events now go to %s, signed with the new secret, no longer to %s (an older key's webhook); "+
				"to send them back there, revoke this key (`router keys revoke %d`) or create another key with %s.\n",
				*owner, netredact.WebhookURLText(*hook), replaced, k.ID, again)
		}
		return nil
	})
}

// keyChangeErr is what a key command says of err, the error of a change that
// did not happen: another session held the key's row or webhook_owners for
// longer than the store waits (store.KeyLockWait), or a signal stopped it.
func keyChangeErr(ctx context.Context, err error) error {
	var busy *store.BusyError
	switch {
	case errors.As(err, &busy):
		return fmt.Errorf("%w; nothing changed. Another session holds it: an open transaction (psql, a migration, another router command); "+
			"find it with `SELECT pid, state, xact_start, query FROM pg_stat_activity WHERE state <> 'idle' ORDER BY xact_start`, "+
			"let it finish or end it (pg_terminate_backend(pid)), and run the command again", busy)
	case ctx.Err() != nil:
		return errors.New("stopped; nothing changed")
	}
	return err
}

// rescueTimeout bounds the database work that undoes, or checks, a change
// whose secret could not be shown: it runs after a signal too.
const rescueTimeout = 10 * time.Second

// uncommittedKey is what keys create says when the commit of key k failed
// (commitErr) after k was printed: whether the key was stored is read back,
// on a context the signal that may have ended the commit does not cut.
func uncommittedKey(ctx context.Context, st *store.Store, k store.CreatedAPIKey, commitErr error) error {
	check, cancel := context.WithTimeout(context.WithoutCancel(ctx), rescueTimeout)
	defer cancel()
	_, err := st.OwnerForAPIKey(check, k.Key)
	switch {
	case err == nil:
		fmt.Fprintf(os.Stderr, "the commit of the new key reported an error (%v), but the key was stored: the key printed is key %d, valid\n", commitErr, k.ID)
		return nil
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("the new key was not stored (%v): discard the key just printed, it is refused; no key was created; run the command again", commitErr)
	}
	return fmt.Errorf("the new key's commit failed after it was printed (%v), and whether it was stored could not be read back (%v): "+
		"run `router keys list`: if key %d (prefix %s…) is there, it was and the printed key is valid; otherwise discard the printed key and run the command again",
		commitErr, err, k.ID, k.Key[:7])
}

// configuredWebhook refuses --webhook-url for an owner whose webhook the
// configuration sets (api_keys[].webhook): the configuration's webhook wins,
// so the URL would never be called and the printed secret never used.
func configuredWebhook(cfg *config.Config, owner, hook string) error {
	if hook == "" {
		return nil
	}
	for _, k := range cfg.APIKeys {
		if k.Owner == owner && k.Webhook != nil {
			return fmt.Errorf("--webhook-url: owner %q already has a webhook in the configuration (api_keys[].webhook: %s), which overrides one set here; "+
				"drop --webhook-url, or remove the owner's webhook from the configuration first", owner, netredact.WebhookURLText(k.Webhook.URL))
		}
	}
	return nil
}

func keysList(ctx context.Context, args []string) error {
	fs := newFlags("keys list", "router keys list [--config router.yaml]", "Lists stored API keys (never the keys themselves).")
	cfgPath := configFlag(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	return withStore(ctx, *cfgPath, func(_ *config.Config, st *store.Store) error {
		keys, err := st.ListAPIKeys(ctx)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tOWNER\tPREFIX\tCREATED\tREVOKED\tWEBHOOK\tPREVIOUS SECRET UNTIL")
		for _, k := range keys {
			revoked, hook, previous := "-", "-", "-"
			if k.RevokedAt != nil {
				revoked = k.RevokedAt.UTC().Format(time.RFC3339)
			}
			if k.WebhookURL != nil {
				hook = netredact.WebhookURLText(*k.WebhookURL) // its path may be its credential
			}
			if k.WebhookPreviousUntil != nil { // a rotation's overlap is running
				previous = k.WebhookPreviousUntil.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(w, "%d\t%s\t%s…\t%s\t%s\t%s\t%s\n", k.ID, k.Owner, k.Prefix, k.CreatedAt.UTC().Format(time.RFC3339), revoked, hook, previous)
		}
		return w.Flush()
	})
}

func keysRevoke(ctx context.Context, args []string) error {
	fs := newFlags("keys revoke", "router keys revoke ID [--no-wait] [--config router.yaml]",
		"Revokes a stored API key: every replica refuses it as soon as the revocation's notification reaches it,\n"+
			"and within auth.cache_ttl (default 5s) should the notification be lost. The command waits auth.cache_ttl\n"+
			"(this configuration's) before it returns, so that once it has, every replica refuses the key.\n"+
			"Run again on a key revoked within the last hour, it waits auth.cache_ttl again (the revocation's commit, from which replicas count it, is not recorded).")
	noWait := fs.Bool("no-wait", false, "return as soon as the revocation is stored, without waiting auth.cache_ttl for every replica to refuse the key")
	cfgPath := configFlag(fs)
	if len(args) > 0 && isHelp(args[0]) {
		return showHelp(fs)
	}
	// The ID comes before, between or after the flags; help anywhere stops
	// before anything is revoked.
	idArg, rest, err := parseAroundArg(fs, args)
	if err != nil {
		return err
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
	if err != nil || id <= 0 {
		return usagef("%q is not a key ID: use the ID column of `router keys list`", idArg)
	}
	return withStore(ctx, *cfgPath, func(cfg *config.Config, st *store.Store) error {
		key, found := storedKey(ctx, st, id)
		before, hooked := ownerWebhook(ctx, st, key.Owner, found)
		r, err := st.RevokeAPIKeyResult(ctx, id)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no stored key has ID %d: see `router keys list`", id)
			}
			return keyChangeErr(ctx, err)
		}
		// Whose key it was, as `keys list` shows it: an ID mistyped
		// revokes another tenant's key, for good.
		whose := ""
		if found {
			whose = fmt.Sprintf("owner %s, prefix %s…", key.Owner, key.Prefix)
		}
		ttl := cfg.Auth.CacheTTL.D()
		if r.Already { // what was asked holds: exit 0, but say nothing was done
			return alreadyRevoked(ctx, st, id, whose, r.RevokedAt, ttl, *noWait, *cfgPath)
		}
		if hooked {
			warnWebhookChange(ctx, st, key.Owner, before, r, cfg.Webhooks.RetryFor.D())
		}
		var out report
		revoked := fmt.Sprintf("key %d was revoked: every replica refuses it within %s of the revocation at most", id, ttl)
		if *noWait || ttl <= 0 {
			out.printf("revoked key %d%s; every replica refuses it as soon as it hears of the revocation, within %s at most\n", id, inParens(whose), ttl)
			return out.done(revoked)
		}
		// A replica that missed the revocation's notification accepts the
		// key from its cache until auth.cache_ttl has passed (SPEC §16: a
		// revoked key is refused from the next request on). The wait is
		// kept when its report could not be printed: the command returns
		// once every replica refuses the key, whatever it could say.
		out.printf("revoked key %d%s; waiting auth.cache_ttl (%s, from %s) for every replica to refuse it (--no-wait skips this)\n", id, inParens(whose), ttl, *cfgPath)
		if err := revokeWait(ctx, ttl); err != nil {
			out.printf("stopped before auth.cache_ttl passed: key %d is revoked, and every replica refuses it within %s of the revocation at most\n", id, ttl)
			return out.done(revoked)
		}
		out.printf("every replica refuses key %d now (a replica whose auth.cache_ttl is longer than this configuration's %s: once its own has passed)\n", id, ttl)
		return out.done(fmt.Sprintf("key %d was revoked, and every replica refuses it now", id))
	})
}

// report is the result a key command prints on stdout after it changed the
// database: the first write that fails is kept (the later ones are not
// tried), so that the command says the change was made although its output
// is lost, instead of exiting 0 with nothing shown.
type report struct{ err error }

func (r *report) printf(format string, a ...any) {
	if r.err == nil {
		_, r.err = fmt.Printf(format, a...)
	}
}

// done is the command's error once its report is printed: nil, or that
// change (what was done, said whole) stands but could not be reported. The
// write's error is wrapped: a stdout whose reader is gone (EPIPE) still
// ends the command quietly with 141, as a Unix tool's (brokenStdout).
func (r *report) done(change string) error {
	if r.err == nil {
		return nil
	}
	return fmt.Errorf("the change was made (%s), but its report could not be written to stdout (%w); "+
		"`router keys list` shows the keys as they are now; give the command a stdout that can be written next time", change, r.err)
}

// shownOnceToNull refuses, before anything is stored, a command that prints
// a secret once (what: "the new key") when stdout is the null device
// (`router keys create --owner acme >/dev/null`): the secret would be valid
// and seen by nobody. Stdout that cannot be examined is let through; a
// write that fails is caught as the secret is printed.
func shownOnceToNull(what string) error {
	out, err := os.Stdout.Stat()
	if err != nil {
		return nil
	}
	null, err := os.Stat(os.DevNull)
	if err != nil || !os.SameFile(out, null) {
		return nil
	}
	return usagef("stdout is %s, but %s is shown only once, on stdout: nobody would ever see it, so nothing was done; "+
		"run the command again with stdout on a terminal, or redirected to a file kept private (`> secret.txt`)", os.DevNull, what)
}

// revokeWait waits d, or until ctx ends (its error then): `keys revoke`
// waiting auth.cache_ttl. A variable, so a test can see what is waited.
var revokeWait = func(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// storedKey is stored key id as `keys list` shows it (found is false when it
// is not stored, or the keys could not be read).
func storedKey(ctx context.Context, st *store.Store, id int64) (k store.APIKeyInfo, found bool) {
	keys, err := st.ListAPIKeys(ctx)
	if err != nil {
		return k, false
	}
	for _, k := range keys {
		if k.ID == id {
			return k, true
		}
	}
	return k, false
}

// ownerWebhook is owner's webhook now, when known is true (hooked is false
// when it has none, or it is unknown).
func ownerWebhook(ctx context.Context, st *store.Store, owner string, known bool) (w store.Webhook, hooked bool) {
	if !known {
		return w, false
	}
	w, err := st.WebhookFor(ctx, owner)
	return w, err == nil
}

// warnWebhookChange says what revoking a key did to its owner's webhook: a
// webhook made with `router keys create --webhook-url` belongs to its key, so
// revoking the key that carried it (a key rotation, say) removes the owner's
// webhook, or brings back an older unrevoked key's URL and signing secret.
// A removed webhook is kept marked removed until r.EventsUntil (the
// redelivery window, webhooks.retry_for + backoff_cap + a Retry-After's
// spread + a failed try (config.DeliveryTryMax: timeout + 15s) +
// config.RedeliveryMargin, after the revocation; store.syncKeyWebhooks): the events of the owner's jobs ending
// until then are written and wait, as failed tries, for a webhook; retryFor
// is this configuration's webhooks.retry_for.
func warnWebhookChange(ctx context.Context, st *store.Store, owner string, before store.Webhook, r store.RevokedAPIKey, retryFor time.Duration) {
	after, err := st.WebhookFor(ctx, owner)
	switch {
	case errors.Is(err, store.ErrNotFound) && r.EventsUntil != nil:
		fmt.Fprintf(os.Stderr, "warning: owner %s now has no webhook (it came with the revoked key). "+
			"The events of its jobs that end in the next %s (until %s; webhooks.retry_for + backoff_cap + timeout + 15s for a try's reads and record, the spread a Retry-After adds to a retry (an eighth of backoff_cap, at most 30s), and %s for what a retry that came due may still wait) are still recorded, not sent: "+
			"each, like those already pending, is retried until it is webhooks.retry_for (%s) old, and is delivered if the owner has a webhook again by then, "+
			"abandoned if not; jobs that end later get no event until it has one. "+
			"Give it one again with `router keys create --owner %s --webhook-url URL`.\n",
			owner, r.EventsFor, r.EventsUntil.UTC().Format(time.RFC3339), config.RedeliveryMargin, retryFor, owner)
	case errors.Is(err, store.ErrNotFound):
		fmt.Fprintf(os.Stderr, "warning: owner %s now has no webhook (it came with the revoked key): its job events are not delivered until it has one again; "+
			"pending ones are retried until they are webhooks.retry_for old, then abandoned. "+
			"Give it one again within that time with `router keys create --owner %s --webhook-url URL`.\n", owner, owner)
	case err != nil:
		fmt.Fprintf(os.Stderr, "warning: could not read owner %s's webhook after the revocation: %v\n", owner, err)
	case after.URL != before.URL || after.Secret != before.Secret:
		fmt.Fprintf(os.Stderr, "warning: owner %s's webhook came with the revoked key; its events now go to %s, an older key's webhook, signed with that key's secret (not the revoked key's). "+
			"To keep the previous receiver, run `router keys create --owner %s --webhook-url URL` and give the receiver the new secret.\n", owner, netredact.WebhookURLText(after.URL), owner)
	}
}
