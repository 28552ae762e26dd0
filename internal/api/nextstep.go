package api

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// appendJob appends the job resource as /v1/jobs answers it: store.Job's
// JSON, and for a failed job a last member "next_step" (race.NextStep)
// saying that the job has ended and how to run it again — the job as its
// job.failed webhook event and `router jobs get` show it too
// (race.AppendJob). step, when not "", is this replica's next_step instead
// (retiredStep: a job no replica can run again). Jobs in other states are
// written exactly as stored.
func appendJob(b []byte, job *store.Job, step string) []byte {
	if step == "" {
		return race.AppendJob(b, job)
	}
	return race.AppendJobStep(b, job, step)
}

// nextSteps gives the next_step of the jobs of one answer that this replica
// knows no replica can run again (retiredStep; "" for every other job), reading
// the database's clock at most once for all of them (rolloutOverAt).
func (s *Server) nextSteps(ctx context.Context) func(*store.Job) string {
	start := sync.OnceValue(func() time.Time { return s.startOnDBClock(ctx) })
	return func(job *store.Job) string { return s.retiredStep(job, start) }
}

// nextStep is nextSteps for one job: "" at once (nothing read, nothing
// allocated) for a job that is not failed, the path of every creation.
func (s *Server) nextStep(ctx context.Context, job *store.Job) string {
	if job == nil || job.State != store.JobFailed {
		return ""
	}
	return s.retiredStep(job, func() time.Time { return s.startOnDBClock(ctx) })
}

// retiredStep is the next_step of a failed job that no replica can run again,
// as the retry handler decides it (retryRouteUnavailable,
// retryPromptUnavailable: 422 route-retired or prompt-retired): this replica
// does not configure the job's route, or does not load its prompt version (a
// prompt job), and the rollout is over (rolloutOverAt, start being this
// replica's start on the database's clock). The retry that race.NextStep
// advises would be refused for good, so the caller is given the 422's advice
// instead: send the request as a new job under a new key. "" for any other
// job — during a rolling update the retry is answered 503 with Retry-After
// and reaches a replica that has what the job needs; a job whose key another
// job took is told so by race.NextStep, as its retry is refused first for
// that (409 idempotency-key-rebound).
func (s *Server) retiredStep(job *store.Job, start func() time.Time) string {
	if job == nil || job.State != store.JobFailed || job.KeyTaken {
		return ""
	}
	lacking := s.lacks(job)
	if lacking == nil || !s.rolloutOverAt(job, start) {
		return ""
	}
	ended := "the job has failed and the router will not try it again by itself"
	retry := "POST /v1/jobs/" + job.ID + "/retry is refused"
	if errors.Is(lacking, race.ErrRouteNotConfigured) {
		return fmt.Sprintf("%s; it was created on route %q, which this deployment no longer configures, so no replica can run it again (%s): %s",
			ended, job.Route, retry, s.routeRetiredAgain(job))
	}
	return fmt.Sprintf("%s; it was created with prompt %q version %q, which this deployment no longer loads, so no replica can run it again (%s): %s",
		ended, job.Operation, job.PromptVersion, retry, promptRetiredAgain)
}

// lacks says what of job this replica cannot run, read from its
// configuration without planning (the retry handler learns it from the
// executor, retryEligible): its route (race.ErrRouteNotConfigured; a chat
// job's route is its model), or for a prompt job its prompt version (the
// prompt set's error); nil when it has both, or cannot tell (no routes or
// prompts given).
func (s *Server) lacks(job *store.Job) error {
	if len(s.Routes) > 0 && !s.Routes[job.Route] {
		return fmt.Errorf("%w: route %q", race.ErrRouteNotConfigured, job.Route)
	}
	if _, isChat := chat.Route(job.Operation); isChat || s.Prompts == nil {
		return nil
	}
	if _, err := s.Prompts.Get(job.Operation, job.PromptVersion); err != nil && promptMissing(err) {
		return err
	}
	return nil
}

// routeRetiredAgain is what the caller of a job whose route was retired can
// do instead of a retry (422 route-retired, next_step): send the request
// again as a new job on a configured route.
func (s *Server) routeRetiredAgain(job *store.Job) string {
	configured := strings.Join(slices.Sorted(maps.Keys(s.Routes)), ", ")
	if _, isChat := chat.Route(job.Operation); isChat {
		return fmt.Sprintf(`send the call again (POST /v1/chat/completions with a new Idempotency-Key) with one of the configured routes (%s) as its "model"`, configured)
	}
	return fmt.Sprintf(`send the request as a new job (POST /v1/jobs with a new Idempotency-Key), naming one of the configured routes (%s) in "route" or none for the prompt's default`, configured)
}

// promptRetiredAgain is what the caller of a job whose prompt version was
// retired can do instead of a retry (422 prompt-retired, next_step).
const promptRetiredAgain = "send the request as a new job (POST /v1/jobs with a new Idempotency-Key) to run the prompt's current version"

// gatedNote says what the conformance gate did to the targets it kept out
// of the job's round, and how to join it to the advice to start a new
// round: next_step's words, and a failed chat call's (chatFailure;
// race.GatedNote). note is "" when the gate refused nothing.
func gatedNote(job *store.Job) (note, then string) { return race.GatedNote(job) }
