package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// A /v1/jobs job's unknown attempt whose router died (lease expiry: no usage
// stored, as store.expireJobAttempts leaves it) resolved "succeeded" counts
// the prompt the provider billed with the result (docs/api.md: the result's
// tokens added to the estimate of the prompt it sent), not the result alone:
// the rendered prompt is counted as the race would have counted it. The
// test stands in for the dead router by clearing the usage the live run
// stored.
func TestResolvedExpiredJobAttemptCountsThePrompt(t *testing.T) {
	b := setup(t, options{timeout: 50 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Hang: true}
	}})
	id := b.unknownJob(t, "resolved-expired-job-usage")
	tag, err := b.db.Pool.Exec(context.Background(), `UPDATE attempts SET usage = NULL WHERE job_id = $1 AND state = 'unknown'`, id)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("clear usage: %v (%d rows)", err, tag.RowsAffected())
	}
	res := b.do(t, http.MethodPost, "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey,
		`{"outcome":"succeeded","result":`+validTriage+`}`)
	if res.status != http.StatusOK {
		t.Fatalf("resolve: status %d: %s", res.status, res.raw)
	}
	job := b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, "")
	atts, _ := job.body["attempts"].([]any)
	if len(atts) == 0 {
		t.Fatalf("job has no attempts: %s", job.raw)
	}
	u, _ := atts[0].(map[string]any)["usage"].(map[string]any)
	prompt, _ := u["prompt_tokens"].(float64)
	completion, _ := u["completion_tokens"].(float64)
	total, _ := u["total_tokens"].(float64)
	if prompt == 0 || completion == 0 || total != prompt+completion || u["estimated"] != true {
		t.Fatalf("resolved attempt's usage = %v; want the router's count of the prompt it sent and of the result, "+
			"total_tokens their sum, marked \"estimated\": true", u)
	}
}
