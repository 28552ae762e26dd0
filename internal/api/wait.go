package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/routerhq/router/internal/store"
)

// settled: nothing more will happen to the job without outside action — it is
// terminal, or unknown (waiting on a resolution).
func settled(state string) bool { return store.IsTerminal(state) || state == store.JobUnknown }

// waitFor reads `Prefer: wait=N` (RFC 7240), capped at the configured maximum.
// It returns the wait and the Preference-Applied value to send ("" for none).
func (s *Server) waitFor(r *http.Request) (time.Duration, string) {
	wait := s.cfg.DefaultWait
	for _, h := range r.Header.Values("Prefer") {
		for _, pref := range strings.Split(h, ",") {
			name, val, ok := strings.Cut(strings.TrimSpace(pref), "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(name), "wait") {
				continue
			}
			n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(val), `"`))
			if err != nil || n < 0 {
				continue // an unusable preference is ignored, as RFC 7240 says
			}
			wait = time.Duration(n) * time.Second
		}
	}
	if wait > s.cfg.MaxWait {
		wait = s.cfg.MaxWait
	}
	if wait <= 0 {
		return 0, ""
	}
	return wait, "wait=" + strconv.Itoa(int(wait/time.Second))
}

// waitJob waits until owner's job is settled or the wait runs out, and returns
// it as last read. It is woken by the database's notifications, so it works for
// jobs run by any replica.
func (s *Server) waitJob(ctx context.Context, owner, id string, wait time.Duration) (*store.Job, error) {
	changed, unsubscribe := s.Listener.Subscribe(id)
	defer unsubscribe()
	return s.waitSubscribed(ctx, owner, id, wait, changed, false)
}

// waitSubscribed is waitJob for a caller that subscribed to the job's changes
// itself; fresh says the job is known to be unsettled (just created), so the
// first read can be skipped.
func (s *Server) waitSubscribed(ctx context.Context, owner, id string, wait time.Duration, changed <-chan struct{}, fresh bool) (*store.Job, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	// Only the state is read while waiting; the whole job once, at the end.
	for {
		if fresh {
			fresh = false
			select {
			case <-changed:
				continue
			case <-ctx.Done():
			}
			break
		}
		state, err := s.Store.JobState(context.WithoutCancel(ctx), owner, id)
		if err != nil {
			return nil, err
		}
		if settled(state) {
			break
		}
		select {
		case <-changed:
			continue
		case <-ctx.Done():
		}
		break
	}
	return s.Store.GetJob(context.WithoutCancel(ctx), owner, id)
}

// startAndWait hands a just-created job to the executor (subscribing to its
// changes first, so none is missed and the first read can be skipped) and waits
// up to wait for it to settle; an existing job is only waited for. It returns the
// job as it stands; err is set only when reading it failed.
func (s *Server) startAndWait(ctx context.Context, job *store.Job, created bool, wait time.Duration) (*store.Job, error) {
	if !created {
		if wait <= 0 || settled(job.State) {
			return job, nil
		}
		return s.waitJob(ctx, job.Owner, job.ID, wait)
	}
	if wait <= 0 {
		s.submitNew(ctx, job)
		return job, nil
	}
	changed, unsubscribe := s.Listener.Subscribe(job.ID)
	defer unsubscribe()
	s.submitNew(ctx, job)
	return s.waitSubscribed(ctx, job.Owner, job.ID, wait, changed, true)
}
