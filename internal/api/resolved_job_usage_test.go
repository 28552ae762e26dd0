package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
)

// A "succeeded" resolution of a /v1/jobs job's unknown attempt says the
// provider did answer: the result is what it billed, as a chat job's content
// is (docs/api.md). Its tokens count in the attempt's usage and cost, not the
// prompt's estimate alone: before, the attempt kept the race's estimate of the
// prompt it sent and no completion tokens at all, so the job's cost left out
// the answer it won with.
func TestResolvedJobAttemptUsageCountsTheResult(t *testing.T) {
	b := setup(t, options{timeout: 50 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Hang: true}
	}})
	id := b.unknownJob(t, "resolved-job-usage")
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
		t.Fatalf("resolved attempt's usage = %v; want the router's estimate of the prompt and of the result, "+
			"marked \"estimated\": true", u)
	}
}
