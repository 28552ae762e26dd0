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

// defaultWebhookOverlap is how long, by default, a replaced webhook secret
// keeps signing deliveries after `router keys rotate-webhook-secret`.
const defaultWebhookOverlap = 24 * time.Hour

// minWebhookOverlap is the shortest --overlap taken: a minute, the smallest
// unit the documentation gives it in.
const minWebhookOverlap = time.Minute

func keysRotateWebhookSecret(ctx context.Context, args []string) error {
	fs := newFlags("keys rotate-webhook-secret", "router keys rotate-webhook-secret --owner NAME [--overlap 24h] [--config router.yaml]",
		"Gives the owner's webhook (made with `router keys create --webhook-url`) a new signing secret, printed once.\n"+
			"Until the overlap ends, every delivery is signed with the new and the replaced secret, so the receiver can switch to the new one meanwhile.\n"+
			"A webhook set in the configuration (api_keys[].webhook) rotates with api_keys[].webhook.previous_secret_env instead.")
	owner := fs.String("owner", "", "the owner (tenant) whose webhook secret is replaced")
	overlap := overlapFlag(defaultWebhookOverlap)
	fs.Var(&overlap, "overlap", "how long the replaced secret keeps signing deliveries beside the new one: a `duration` such as 90m, 24h or 168h (at least 1m, at most 720h, 30 days)")
	cfgPath := configFlag(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *owner == "" {
		return usagef("--owner is required: the tenant whose webhook secret to rotate (see `router keys rotate-webhook-secret --help`)")
	}
	// Blank (`--owner "$O"` with $O unset, or spaces): the command line's
	// fault (exit 2), not "owner has no webhook" (exit 1) after a trip to
	// the database.
	if strings.TrimSpace(*owner) == "" {
		return usagef("--owner %q is blank: give the owner (tenant) whose webhook secret to rotate, as the OWNER column of `router keys list` shows it", *owner)
	}
	// Checked before prepareSchema migrates anything: not UTF-8, it would
	// reach PostgreSQL as an encoding error (exit 1).
	if err := config.ValidateOwner(*owner); err != nil {
		return usagef("--owner: %v", err)
	}
	if overlap <= 0 || time.Duration(overlap) > store.MaxWebhookOverlap { // 720h
		return usagef("--overlap %s: the replaced secret must keep signing for more than 0 and at most 720h (30 days), long enough for the receiver to switch to the new secret; for example --overlap 24h",
			&overlap)
	}
	if time.Duration(overlap) < minWebhookOverlap {
		// Seconds or less is a slip (24s for 24h): the replaced secret would
		// stop signing before any receiver could switch.
		hint := ""
		if d := time.Duration(overlap); d >= time.Second && d%time.Second == 0 {
			hint = fmt.Sprintf(" (did you mean --overlap %dh?)", d/time.Second)
		}
		return usagef("--overlap %s: the replaced secret must keep signing for at least 1m, long enough for the receiver to switch to the new secret; "+
			"give minutes or hours, for example --overlap 24h%s", &overlap, hint)
	}
	if err := shownOnceToNull("the new webhook secret"); err != nil {
		return err
	}
	return withStore(ctx, *cfgPath, func(cfg *config.Config, st *store.Store) error {
		if err := configuredWebhookRotation(cfg, *owner); err != nil {
			return err
		}
		if err := prepareSchema(ctx, cfg, st, *cfgPath); err != nil {
			return err
		}
		// The running router's configuration may set the webhook even when
		// this one does not: it is then the owner's webhook in the database.
		if w, err := st.WebhookFor(ctx, *owner); err == nil && w.Secret == "" {
			return fmt.Errorf("owner %q's webhook (%s) comes from the configuration a running router synced (api_keys[].webhook), which overrides a stored key's: "+
				"rotating the stored key's secret would change no delivery; rotate the configured secret with api_keys[].webhook.previous_secret_env", *owner, netredact.WebhookURLText(w.URL))
		}
		// The secret is printed inside the rotation's transaction: one that
		// could not be printed (stdout on a full disk, a closed pipe) is
		// rolled back rather than left signing with a secret nobody has.
		var r store.RotatedWebhookSecret
		var printErr error
		printed := false
		_, err := st.RotateWebhookSecretShown(ctx, *owner, time.Duration(overlap), func(rotated store.RotatedWebhookSecret) error {
			r = rotated
			if _, printErr = fmt.Println(rotated.Secret); printErr != nil {
				return printErr
			}
			printed = true
			return nil
		})
		switch {
		case printErr != nil:
			return fmt.Errorf("could not print the new webhook secret (%v), so the rotation was rolled back: owner %s's webhook secret is unchanged; "+
				"run the command again with a stdout that can be written", printErr, *owner)
		case printed && err != nil:
			if err := uncommittedRotation(ctx, st, *owner, r, err); err != nil {
				return err
			}
		case removedConfigured(err):
			// The message says what to do (finish the rolling update, or wait).
			return fmt.Errorf("%w. Nothing was changed", err)
		case errors.Is(err, store.ErrWebhookElsewhere):
			return fmt.Errorf("owner %q: %w: rotating the stored key's secret would change no delivery, so nothing was changed; "+
				"see `router keys list`, and rotate a configured secret with api_keys[].webhook.previous_secret_env", *owner, err)
		case errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("owner %q has no webhook from a stored key (no unrevoked key made with --webhook-url), so there is no secret to rotate: "+
				"see `router keys list`, or give it a webhook with `router keys create --owner %s --webhook-url URL`", *owner, *owner)
		case err != nil:
			return keyChangeErr(ctx, err)
		}
		fmt.Fprintf(os.Stderr, "The new webhook secret of owner %s (key %d, %s) is shown once. Until %s (the database's clock) each delivery is signed "+
			"with both the new and the replaced secret; give the receiver the new secret before then: after it, only the new one signs.\n",
			*owner, r.KeyID, netredact.WebhookURLText(r.URL), r.PreviousUntil.UTC().Format(time.RFC3339))
		if r.CutShort != nil {
			fmt.Fprintf(os.Stderr, "warning: an earlier rotation's overlap was running until %s; the secret it kept no longer signs, "+
				"so a receiver still verifying with it refuses deliveries from now on.\n", r.CutShort.UTC().Format(time.RFC3339))
		}
		return nil
	})
}

// uncommittedRotation is what a rotation whose commit failed (commitErr)
// after its secret r was printed did: as a rule nothing, and the printed
// secret must be discarded; but a connection lost as the commit went out
// leaves that unknown, so the owner's webhook is read back, on a context the
// signal that may have cut the commit does not cut. nil: the rotation took
// effect after all, and the printed secret is the owner's.
func uncommittedRotation(ctx context.Context, st *store.Store, owner string, r store.RotatedWebhookSecret, commitErr error) error {
	check, cancel := context.WithTimeout(context.WithoutCancel(ctx), rescueTimeout)
	defer cancel()
	w, err := st.WebhookFor(check, owner)
	switch {
	case err == nil && w.Secret == r.Secret:
		fmt.Fprintf(os.Stderr, "the commit of the rotation reported an error (%v), but the rotation took effect: the secret printed is owner %s's new webhook secret\n", commitErr, owner)
		return nil
	case err == nil || errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("the rotation was not committed (%v): discard the secret just printed, it signs nothing; owner %s's webhook secret is unchanged; run the command again", commitErr, owner)
	}
	return fmt.Errorf("the rotation's commit failed after its secret was printed (%v), and whether it took effect could not be read back (%v): "+
		"run `router keys list`: if key %d's PREVIOUS SECRET UNTIL is %s, it did and the printed secret is owner %s's; otherwise discard the printed secret and run the command again",
		commitErr, err, r.KeyID, r.PreviousUntil.UTC().Format(time.RFC3339), owner)
}

// configuredWebhookRotation refuses to rotate the stored secret of an owner
// whose webhook the configuration sets (api_keys[].webhook): that webhook
// wins, with the secret of its secret_env, so the stored key's new secret
// would sign nothing.
func configuredWebhookRotation(cfg *config.Config, owner string) error {
	for _, k := range cfg.APIKeys {
		if k.Owner == owner && k.Webhook != nil {
			return fmt.Errorf("owner %q's webhook comes from the configuration (api_keys[].webhook: %s), which overrides one set by a stored key, and its secret from the environment: "+
				"rotate it there — put the new secret in the variable of secret_env and the current one in a variable named by api_keys[].webhook.previous_secret_env, "+
				"restart, and drop previous_secret_env once the receiver has switched", owner, netredact.WebhookURLText(k.Webhook.URL))
		}
	}
	return nil
}

// overlapFlag is --overlap: a Go duration, printed as given (24h, not
// 24h0m0s), whose parse error says how to write one.
type overlapFlag time.Duration

func (o *overlapFlag) String() string {
	s := time.Duration(*o).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func (o *overlapFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%w: write a duration in hours or minutes, such as 90m, 24h or 168h (a week; days are not a unit)", err)
	}
	*o = overlapFlag(d)
	return nil
}

// removedConfigured reports whether err is the refusal for an owner whose
// configured webhook a replica's start marked removed, within its window.
func removedConfigured(err error) bool {
	var c *store.ConfiguredWebhookError
	return errors.As(err, &c) && c.RemovedAt != nil
}
