package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
)

// A failed job whose prompt version is retired is told what the retry's 422
// prompt-retired says — send the request as a new job with a new
// Idempotency-Key — in GET /v1/jobs/{id} and in GET /v1/jobs alike; while a
// rolling update may be under way (the replica up for less than 15 minutes)
// the retry is a 503 that another replica answers, and next_step still
// advises it.
func TestNextStepOfRetiredVersionSaysNewJob(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }})
	id := failedJob(t, b, "retired-advice")
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE jobs SET prompt_version = 'retired-0', created_at = now() - interval '2 hours'
		WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	stepOf := func() (one, listed string) {
		got := b.do(t, "GET", "/v1/jobs/"+id, acmeKey, "")
		one, _ = got.body["next_step"].(string)
		list := b.do(t, "GET", "/v1/jobs?limit=100", acmeKey, "")
		data, _ := list.body["data"].([]any)
		for _, j := range data {
			if m, _ := j.(map[string]any); m["id"] == id {
				listed, _ = m["next_step"].(string)
			}
		}
		return one, listed
	}

	api.SetStarted(b.api, time.Now().Add(-time.Minute)) // a rolling update may be under way
	one, listed := stepOf()
	if !strings.Contains(one, "start a new round with POST /v1/jobs/"+id+"/retry") || listed != one {
		t.Fatalf("during a rollout, next_step should advise the retry (answered 503 here, run by a replica with the version):\n  GET: %s\n  list: %s", one, listed)
	}

	api.SetStarted(b.api, time.Now().Add(-time.Hour))
	one, listed = stepOf()
	want := `version "retired-0", which this deployment no longer loads, so no replica can run it again (POST /v1/jobs/` + id +
		`/retry is refused): send the request as a new job (POST /v1/jobs with a new Idempotency-Key) to run the prompt's current version`
	if !strings.Contains(one, want) || strings.Contains(one, "start a new round") || listed != one {
		t.Fatalf("next_step of a job whose version is retired:\n  GET: %s\n  list: %s\nwant it to contain: %s", one, listed, want)
	}
}
