package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
)

// A failed job's next_step says how to run it again (docs/api.md): "start a
// new round with POST /v1/jobs/{id}/retry", except where a retry would be
// refused the same way (the provider refused the request itself, the gate
// keeps its targets out, its key was taken), where it says to send a new
// request instead. A job whose route this deployment no longer configures —
// one the recovery leader failed as stranded ("route … is not configured on
// this replica", no replica took it within execution.handover_wait), or any
// failed job after its route was removed — is still told to retry; the retry
// it advises is refused with a final 422 route-retired ("no replica can run
// it again … send the request as a new job"). The caller following the
// router's own advice gets a final refusal, and the webhook's job.failed,
// which carries next_step, sends automated clients the same way.
func TestNextStepOfJobWhoseRouteIsRetired(t *testing.T) {
	// The provider fails (a 500: the provider's fault, not the request's).
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }})
	ctx := context.Background()
	id := failedJob(t, b, "retired-route")
	// The route was removed by a configuration change well before this
	// replica started (up for an hour): no rolling update is under way.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET route = 'gone', created_at = now() - interval '2 hours',
		error = 'route gone is not configured on this replica (no replica that can run it took it within execution.handover_wait, 1m0s)'
		WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	api.SetStarted(b.api, time.Now().Add(-time.Hour))
	got := b.do(t, "GET", "/v1/jobs/"+id, acmeKey, "")
	step, _ := got.body["next_step"].(string)
	retry := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "")
	typ, _ := retry.body["type"].(string)
	if retry.status != http.StatusUnprocessableEntity || !strings.HasSuffix(typ, "route-retired") {
		t.Fatalf("premise: the retry of a job on a retired route: %d %s; want 422 route-retired", retry.status, retry.raw)
	}
	if strings.Contains(step, "start a new round") {
		t.Errorf("next_step says to start a new round, which no replica can run:\n  next_step: %s\n  the retry: %d %s",
			step, retry.status, retry.body["detail"])
	}

	// The commoner case: the job failed under a prompt version the
	// deployment has since replaced (every edit of a prompt bumps its
	// version), the rollout long over.
	old := failedJob(t, b, "retired-version")
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET prompt_version = 'retired-0', created_at = now() - interval '2 hours'
		WHERE id = $1`, old); err != nil {
		t.Fatal(err)
	}
	got = b.do(t, "GET", "/v1/jobs/"+old, acmeKey, "")
	step, _ = got.body["next_step"].(string)
	retry = b.do(t, "POST", "/v1/jobs/"+old+"/retry", acmeKey, "")
	typ, _ = retry.body["type"].(string)
	if retry.status != http.StatusUnprocessableEntity || !strings.HasSuffix(typ, "prompt-retired") {
		t.Fatalf("premise: the retry of a job of a retired prompt version: %d %s; want 422 prompt-retired", retry.status, retry.raw)
	}
	if strings.Contains(step, "start a new round") {
		t.Errorf("next_step of a job whose prompt version was retired says to start a new round:\n  next_step: %s\n  the retry: %d %s",
			step, retry.status, retry.body["detail"])
	}
}
