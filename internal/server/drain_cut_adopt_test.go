package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// replica is a router serving on its own listeners: stop is its SIGTERM,
// wait what ServeListeners returned once the shutdown is over.
type replica struct {
	base string
	stop context.CancelFunc
	wait func() error
}

// startReplica runs a router for cfg until the test ends (then stopped,
// waited for and closed).
func startReplica(t *testing.T, cfg *config.Config) *replica {
	t.Helper()
	srv, err := server.New(context.Background(), cfg, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	opsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ln.Close()
		srv.Close()
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ServeListeners(ctx, ln, opsLn) }()
	var once sync.Once
	var servedErr error
	r := &replica{base: "http://" + ln.Addr().String(), stop: stop,
		wait: func() error { once.Do(func() { servedErr = <-served }); return servedErr }}
	t.Cleanup(func() {
		stop()
		if err := r.wait(); err != nil {
			t.Errorf("ServeListeners: %v", err)
		}
		srv.Close()
	})
	return r
}

// sseChunk writes one chunk of an OpenAI chat completion stream.
func sseChunk(w http.ResponseWriter, content, finish string) {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	c, _ := json.Marshal(content)
	fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%s},\"finish_reason\":%s}]}\n\n", c, fr)
	w.(http.Flusher).Flush()
}

// SPEC §17: a router stopped while its provider is answering (the drain ran
// out) hands the job over, and the replica that adopts it goes on with the
// race. The cut attempt is recorded failed, kind shutdown; it used to count as
// its target's failure, using up the target and the retry budget, so the
// adopting replica failed the job — at once with max_retries 0, or once the
// one retry of the default had gone to a 503 — with a reason saying the job
// goes on on another replica. Found by review.
func TestStreamCutByStopIsRunAgainByTheAdoptingReplica(t *testing.T) {
	t.Run("max_retries 0", func(t *testing.T) { streamCutByStop(t, "max_retries: 0", 1) })
	// The first call answers 503; its retry is answering when the router stops.
	t.Run("retry spent on a 503", func(t *testing.T) { streamCutByStop(t, "max_retries: 1", 2) })
}

// streamCutByStop runs a job on replica A whose cutCall-th provider call
// (those before answer 503) is answering when A is stopped, and wants it
// finished, succeeded, by replica B.
func streamCutByStop(t *testing.T, retries string, cutCall int32) {
	db := testdb.New(t, store.Options{})
	var calls atomic.Int32
	began := make(chan struct{}, 1)
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if n < cutCall {
			http.Error(w, `{"error":{"message":"busy","type":"server_error"}}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if n == cutCall {
			sseChunk(w, validTriage[:10], "")
			began <- struct{}{}
			<-r.Context().Done() // still answering when the router stops
			return
		}
		sseChunk(w, validTriage, "stop")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer llm.Close()
	cfgFor := func() *config.Config {
		t.Setenv("SERVER_TEST_KEY", tenantKey)
		prompts, _ := filepath.Abs("../../prompts")
		cfg, err := config.Parse(fmt.Appendf(nil, `api_keys: [{owner: acme, key_env: SERVER_TEST_KEY}]
providers:
  - {name: llm, type: openai, base_url: %q, model: m, stream: true, timeout: 30s, first_byte_timeout: 10s, %s}
routes:
  default: {providers: [llm]}
prompts_dir: %q
conformance: {gate: off}
log: {level: error}
shutdown: {http: 1s, drain: 1s}
`, llm.URL+"/v1", retries, prompts))
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("DATABASE_URL", "")
		cfg.DatabaseURL = db.URL
		return cfg
	}
	a := startReplica(t, cfgFor())
	b := startReplica(t, cfgFor()) // adopts what A hands over

	req, _ := http.NewRequest(http.MethodPost, a.base+"/v1/jobs",
		strings.NewReader(`{"prompt":"triage","input":{"subject":"Login","body":"I cannot log in."}}`))
	req.Header.Set("Authorization", "Bearer "+tenantKey)
	req.Header.Set("Idempotency-Key", "stream-cut-by-stop")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		ID string `json:"id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&job)
	resp.Body.Close()
	if err != nil || job.ID == "" {
		t.Fatalf("POST /v1/jobs: %d, id %q (%v)", resp.StatusCode, job.ID, err)
	}
	<-began
	a.stop() // SIGTERM: the one-second drain runs out in the middle of the answer
	if err := a.wait(); err != nil {
		t.Fatalf("replica A's ServeListeners: %v", err)
	}

	// Replica B answers once the job has ended (or its wait has).
	req, _ = http.NewRequest(http.MethodGet, b.base+"/v1/jobs/"+job.ID, nil)
	req.Header.Set("Authorization", "Bearer "+tenantKey)
	req.Header.Set("Prefer", "wait=60")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		State string          `json:"state"`
		Error json.RawMessage `json:"error"`
	}
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.JobSucceeded {
		rows, _ := db.Pool.Query(context.Background(), `SELECT seq, provider, role, state, coalesce(error->>'kind', '') FROM attempts WHERE job_id = $1 ORDER BY seq`, job.ID)
		var seen []string
		for rows.Next() {
			var seq int
			var provider, role, state, kind string
			if rows.Scan(&seq, &provider, &role, &state, &kind) == nil {
				seen = append(seen, fmt.Sprintf("#%d %s %s %s %s", seq, provider, role, state, kind))
			}
		}
		rows.Close()
		t.Fatalf("job %s (%s) after its router was stopped in the middle of an answer; want it run again by the replica that adopted it and succeeded (provider calls %d; attempts: %s)",
			got.State, got.Error, calls.Load(), strings.Join(seen, "; "))
	}
	if n := calls.Load(); n != cutCall+1 {
		t.Errorf("%d provider calls; want %d (the cut one sent again once)", n, cutCall+1)
	}
}
