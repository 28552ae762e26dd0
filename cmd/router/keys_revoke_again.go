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
// stopped during its wait (or during its commit), or run with --no-wait, so
// this one waits auth.cache_ttl (ttl) unless the revocation is long past
// (restOfCacheTTL).
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
		out.printf("key %d was already revoked (at %s), more than auth.cache_ttl (%s) ago (and the %s its commit may have taken); nothing changed; every replica refuses it\n",
			id, when, ttl, revokeCommitSlack)
		return result()
	}
	unread := ""
	if clockErr != nil { // the most that can be left: never less than the promise needs
		unread = fmt.Sprintf("; the database clock could not be read (%v), so all of it", clockErr)
	}
	// Waited when it cannot be said, as a fresh revocation's wait is.
	out.printf("key %d was already revoked (at %s); nothing changed; waiting auth.cache_ttl (%s, from %s%s) for every replica to refuse it: "+
		"a replica counts it from when the revocation's commit became visible, which is not recorded (--no-wait skips this)\n",
		id, when, ttl, cfgPath, unread)
	if err := revokeWait(ctx, rest); err != nil {
		out.printf("stopped before auth.cache_ttl passed: every replica refuses key %d within %s of its revocation at %s at most\n", id, ttl, at)
		return result()
	}
	out.printf("every replica refuses key %d now (a replica whose auth.cache_ttl is longer than this configuration's %s: once its own has passed)\n", id, ttl)
	return result()
}

// revokeCommitSlack is how long after its revoked_at stamp a revocation's
// commit is taken to have become visible at the latest.
const revokeCommitSlack = time.Hour

// restOfCacheTTL is how long a run on a key revoked at revokedAt (on the
// database clock) waits for every replica to refuse it: the whole ttl, or
// nothing once revokedAt is more than ttl and revokeCommitSlack ago. A
// replica that looked the key up before the revocation's commit became
// visible caches it as valid for ttl from that lookup, and revoked_at is
// stamped before the commit (a synchronous standby, a slow disk, a first
// run stopped during its commit: the commit may end well after it); this
// run's read of the revoked key comes after it, so ttl from now is always
// enough. All of ttl, with the error, when the clock cannot be read.
func restOfCacheTTL(ctx context.Context, st *store.Store, revokedAt time.Time, ttl time.Duration) (time.Duration, error) {
	now, err := st.Now(ctx)
	if err != nil {
		return ttl, err
	}
	if now.Sub(revokedAt) > ttl+revokeCommitSlack {
		return 0, nil
	}
	return ttl, nil
}

// inParens is s in parentheses after a space, or nothing when s is empty.
func inParens(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
