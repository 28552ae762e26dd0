package race_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// storedCompletionsServer is an OpenAI-compatible endpoint that behaves as
// OpenAI's stored completions do: a completion is stored (and listed by its
// metadata) only when its request said `store: true`; every request is
// processed (and billed) whatever it said.
type storedCompletionsServer struct {
	mu     sync.Mutex
	posts  int                       // requests processed
	stored map[string]map[string]any // attempt id -> stored completion
}

func (s *storedCompletionsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method == http.MethodGet { // the stored-completions list, filtered by metadata
		id := r.URL.Query().Get("metadata[" + providers.MetadataAttemptID + "]")
		data := []any{}
		if c, ok := s.stored[id]; ok {
			data = append(data, c)
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "has_more": false})
		return
	}
	var req struct {
		Store    bool              `json:"store"`
		Metadata map[string]string `json:"metadata"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	s.posts++
	c := map[string]any{
		"id": "chatcmpl-" + time.Now().Format("150405.000000000"), "object": "chat.completion", "created": time.Now().Unix(), "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": racetest.ValidTriage}}},
		"usage": map[string]any{"prompt_tokens": 40, "completion_tokens": 20, "total_tokens": 60},
	}
	if req.Store && req.Metadata[providers.MetadataAttemptID] != "" {
		c["metadata"] = req.Metadata
		s.stored[req.Metadata[providers.MetadataAttemptID]] = c
	}
	json.NewEncoder(w).Encode(c)
}

func (s *storedCompletionsServer) processed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.posts
}

// A provider's lookup can only find requests that were sent to be stored
// (supports_lookup: `store: true` and the attempt id as metadata). An attempt
// sent while the provider's supports_lookup was off — by a replica of the
// previous configuration during the rolling update that turns it on, or
// before an operator turned it on to get stuck `unknown` attempts reconciled
// (docs/operations.md even says an unconfigured target's attempt "resolves
// itself once the leader configures that target again with a provider that
// can look requests up") — is never in the provider's list, whatever the
// provider did with it. Reconciliation does not know how the attempt was sent:
// it trusts the empty list as "the provider has no record of this request, so
// it did no work", and for an attempt whose router died (lease_expired) that
// makes it unworked, so the resumed job sends the request to the same
// provider again — a blind re-dispatch of a request the provider already
// processed (SPEC §6.8), billed twice.
func TestNoRecordFromLookupEnabledAfterTheSendIsNotTrusted(t *testing.T) {
	srv := &storedCompletionsServer{stored: map[string]map[string]any{}}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	// The replica that sent the attempt: supports_lookup off.
	before, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "openai", BaseURL: ts.URL + "/v1", APIKey: "sk-test", Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	// The recovery leader, after supports_lookup was turned on.
	after, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "openai", BaseURL: ts.URL + "/v1", APIKey: "sk-test", Model: "gpt-test",
		SupportsLookup: true})
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{{Name: "openai", Adapter: after}},
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	old := racetest.New(t, racetest.Options{Route: race.Route{}, DB: b.DB, LeaseOwner: "replica-before",
		Providers: []racetest.Provider{{Name: "openai", Adapter: before}}})
	ctx := context.Background()

	// The first replica claims the job, with its first attempt, and sends
	// the request (supports_lookup off: not stored); the provider processes
	// it. The replica dies before recording the answer.
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, _ := store.Fingerprint("triage", "", "", input)
	nj := store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "lookup-enabled-later", Fingerprint: fp,
		PromptVersion: "3", Route: "default", Input: input, LeaseOwner: "replica-before", LeaseFor: 500 * time.Millisecond}
	plan, _, ok, err := old.Runner.Plan(&store.Job{Operation: nj.Operation, PromptVersion: nj.PromptVersion, Route: nj.Route, Input: nj.Input})
	if err != nil || !ok || plan.First() == nil {
		t.Fatalf("plan: ok=%v err=%v", ok, err)
	}
	nj.First = plan.First()
	job, created, err := b.Store.CreateJob(ctx, nj)
	plan.Discard()
	if err != nil || !created || len(job.Attempts) != 1 {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	if _, err := before.Complete(ctx, &providers.Request{AttemptID: job.Attempts[0].ID, JobID: job.ID,
		Messages: []providers.Message{{Role: "user", Content: "Subject: Login. I cannot log in."}}}); err != nil {
		t.Fatal(err)
	}
	if srv.processed() != 1 {
		t.Fatalf("the provider processed %d requests, want 1", srv.processed())
	}
	// The dead replica's leases run out (database clock).
	if _, err := b.DB.Pool.Exec(ctx, `SELECT pg_sleep(greatest(0, extract(epoch FROM lease_expires_at - clock_timestamp())) + 0.001)
		FROM attempts WHERE id = $1`, job.Attempts[0].ID); err != nil {
		t.Fatal(err)
	}

	// The recovery leader (supports_lookup on) expires the lease and
	// reconciles the attempt.
	b.Runner.RecoverOnce(ctx, 10)
	deadline := time.Now().Add(10 * time.Second)
	var j *store.Job
	for {
		if j, err = b.Store.GetJobAny(ctx, job.ID); err != nil {
			t.Fatal(err)
		}
		// Left unknown (the fix), or resumed and settled (the bug).
		if j.State == store.JobUnknown || store.IsTerminal(j.State) || srv.processed() > 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	first := j.Attempts[0]
	if n := srv.processed(); n != 1 || first.State != store.AttemptUnknown {
		t.Fatalf("the provider processed the request %d times (want 1); job %s, attempt 1 %s, error %s: the lookup's empty list for a request "+
			"sent without store:true was taken as proof the provider did no work, and the request was sent again",
			n, j.State, first.State, strings.TrimSpace(string(first.Error)))
	}
	// The operator is told, once, why and what to do.
	logs.mu.Lock()
	logged := logs.buf.String()
	logs.mu.Unlock()
	if n := strings.Count(logged, "request was not sent to be recorded"); n != 1 || !strings.Contains(logged, "Resolve it by hand") ||
		!strings.Contains(logged, job.Attempts[0].ID) {
		t.Fatalf("want one warning naming the attempt and saying to resolve it by hand, got %d in:\n%s", n, logged)
	}
}
