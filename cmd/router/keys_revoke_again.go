package main

import (
	"context"
	"fmt"
	"time"

	"github.com/routerhq/router/internal/store"
)

// alreadyRevoked is `router keys revoke` of key id, revoked before at
// revokedAt (on the database clock; whose names its owner and prefix, or is
// empty when they could not be read). Nothing changes, but the promise stands: once the command
// returns, every replica refuses the key. The first run may have been
// stopped during its wait, or run with --no-wait, so this one waits what is
// left of auth.cache_ttl (ttl) since the revocation, read on the database
// clock, the one revokedAt comes from.
func alreadyRevoked(ctx context.Context, st *store.Store, id int64, whose string, revokedAt time.Time, ttl time.Duration, noWait bool, cfgPath string) error {
	at := revokedAt.UTC().Format(time.RFC3339)
	when := at // what the first line says in parentheses
	if whose != "" {
		when += "; " + whose
	}
	var out report
	result := func() error {
		if out.err != nil {
			return fmt.Errorf("key %d was already revoked (at %s), so nothing changed, but that could not be written to stdout (%w); give the command a stdout that can be written", id, at, out.err)
		}
		return nil
	}
	if noWait || ttl <= 0 {
		out.printf("key %d was already revoked (at %s); nothing changed; every replica refuses it within %s of the revocation at most\n", id, when, ttl)
		return result()
	}
	rest, clockErr := restOfCacheTTL(ctx, st, revokedAt, ttl)
	if rest <= 0 {
		out.printf("key %d was already revoked (at %s), more than auth.cache_ttl (%s) ago; nothing changed; every replica refuses it\n", id, when, ttl)
		return result()
	}
	unread := ""
	if clockErr != nil { // the most that can be left: never less than the promise needs
		unread = fmt.Sprintf("; the database clock could not be read (%v), so all of it", clockErr)
	}
	// Waited when it cannot be said, as a fresh revocation's wait is.
	out.printf("key %d was already revoked (at %s); nothing changed; waiting the rest of auth.cache_ttl (%s of %s, from %s%s) for every replica to refuse it (--no-wait skips this)\n",
		id, when, rest, ttl, cfgPath, unread)
	if err := revokeWait(ctx, rest); err != nil {
		out.printf("stopped before auth.cache_ttl passed: every replica refuses key %d within %s of its revocation at %s at most\n", id, ttl, at)
		return result()
	}
	out.printf("every replica refuses key %d now (a replica whose auth.cache_ttl is longer than this configuration's %s: once its own has passed)\n", id, ttl)
	return result()
}

// restOfCacheTTL is what is left of ttl since revokedAt on the database
// clock, rounded up to the millisecond; all of ttl, with the error, when the
// clock cannot be read.
func restOfCacheTTL(ctx context.Context, st *store.Store, revokedAt time.Time, ttl time.Duration) (time.Duration, error) {
	now, err := st.Now(ctx)
	if err != nil {
		return ttl, err
	}
	rest := min(revokedAt.Add(ttl).Sub(now), ttl) // a clock stepped back since: never more than ttl
	return (rest + time.Millisecond - 1).Truncate(time.Millisecond), nil
}

// inParens is s in parentheses after a space, or nothing when s is empty.
func inParens(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
