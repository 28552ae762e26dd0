package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Sample is one caller request as the load generator saw it.
type Sample struct {
	Latency  time.Duration // until the answer (or the job's terminal state when followed)
	Status   int           // HTTP status of the first answer (0: transport error)
	State    string        // job state at the end ("" for direct calls)
	JobID    string
	Key      string
	Nonce    string
	Replayed bool
	Err      string
}

// OK reports a successful outcome: 2xx and, for jobs, succeeded.
func (s Sample) OK() bool {
	return s.Err == "" && s.Status >= 200 && s.Status < 300 && (s.State == "" || s.State == "succeeded")
}

// Run is the result of one closed-loop run.
type Run struct {
	Samples  []Sample
	Elapsed  time.Duration
	Callers  int
	TimedOut bool // stopped by its time bound before all requests ran
}

// Throughput is completed requests per second.
func (r Run) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(len(r.Samples)) / r.Elapsed.Seconds()
}

// Errors counts samples that did not succeed.
func (r Run) Errors() int {
	n := 0
	for _, s := range r.Samples {
		if !s.OK() {
			n++
		}
	}
	return n
}

// closedLoop runs n requests with `callers` concurrent callers, each starting
// its next request when the previous one answered; it stops early when maxDur
// passes (requests in flight finish).
func closedLoop(ctx context.Context, callers, n int, maxDur time.Duration, do func(ctx context.Context, i int) Sample) Run {
	ctx, cancel := context.WithTimeout(ctx, maxDur+2*time.Minute) // hard bound on stragglers
	defer cancel()
	stopAt := time.Now().Add(maxDur)
	var next atomic.Int64
	var timedOut atomic.Bool
	var mu sync.Mutex
	var all []Sample
	var wg sync.WaitGroup
	start := time.Now()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []Sample
			defer func() { mu.Lock(); all = append(all, mine...); mu.Unlock() }()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if time.Now().After(stopAt) {
					timedOut.Store(true)
					return
				}
				mine = append(mine, do(ctx, i))
			}
		}()
	}
	wg.Wait()
	return Run{Samples: all, Elapsed: time.Since(start), Callers: callers, TimedOut: timedOut.Load()}
}

// Client makes the calls; one keep-alive pool for every scenario.
type Client struct {
	http *http.Client
}

func newClient() *Client {
	tr := &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second}
	return &Client{http: &http.Client{Transport: tr, Timeout: 3 * time.Minute}}
}

type jobView struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

func (c *Client) post(ctx context.Context, url, key string, hdr map[string]string, body []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp, raw, err
}

func triageBody(nonce string) []byte {
	return fmt.Appendf(nil, `{"prompt":"triage","input":{"subject":"nonce=%s; cannot log in","body":"The reset link expired."}}`, nonce)
}

func chatBody(model, nonce string) []byte {
	return fmt.Appendf(nil, `{"model":%q,"messages":[{"role":"user","content":"nonce=%s; triage: the reset link expired"}]}`, model, nonce)
}

// Job posts a triage job with Prefer: wait. With follow, a job that is not
// terminal when the answer comes (unknown, waiting on reconciliation) is polled
// until it is, for at most follow.
func (c *Client) Job(ctx context.Context, p *RouterProc, idem, nonce string, follow time.Duration) Sample {
	s := Sample{Key: idem, Nonce: nonce}
	start := time.Now()
	resp, raw, err := c.post(ctx, p.Base+"/v1/jobs", p.Key, map[string]string{"Idempotency-Key": idem, "Prefer": "wait=60"}, triageBody(nonce))
	if err != nil {
		s.Err, s.Latency = err.Error(), time.Since(start)
		return s
	}
	s.Status, s.Replayed = resp.StatusCode, resp.Header.Get("Idempotent-Replayed") == "true"
	var j jobView
	_ = json.Unmarshal(raw, &j)
	s.JobID, s.State = j.ID, j.State
	if follow > 0 && j.ID != "" && !terminal(j.State) {
		s.State = c.follow(ctx, p, j.ID, start.Add(follow))
	}
	s.Latency = time.Since(start)
	return s
}

func terminal(state string) bool {
	return state == "succeeded" || state == "failed" || state == "cancelled"
}

func (c *Client) follow(ctx context.Context, p *RouterProc, id string, until time.Time) string {
	state := ""
	for time.Now().Before(until) && ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.Base+"/v1/jobs/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+p.Key)
		if resp, err := c.http.Do(req); err == nil {
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var j jobView
			_ = json.Unmarshal(raw, &j)
			state = j.State
			if terminal(state) {
				return state
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return state
}

// Chat posts a chat completion through the router (model = the route).
func (c *Client) Chat(ctx context.Context, p *RouterProc, idem, nonce string) Sample {
	s := Sample{Key: idem, Nonce: nonce}
	hdr := map[string]string{}
	if idem != "" {
		hdr["Idempotency-Key"] = idem
	}
	start := time.Now()
	resp, _, err := c.post(ctx, p.Base+"/v1/chat/completions", p.Key, hdr, chatBody("default", nonce))
	s.Latency = time.Since(start)
	if err != nil {
		s.Err = err.Error()
		return s
	}
	s.Status, s.JobID = resp.StatusCode, resp.Header.Get("X-Router-Job-Id")
	s.Replayed = resp.Header.Get("Idempotent-Replayed") == "true"
	return s
}

// Direct posts the same chat completion straight to the mock.
func (c *Client) Direct(ctx context.Context, mockURL, model, nonce string) Sample {
	s := Sample{Nonce: nonce}
	start := time.Now()
	resp, _, err := c.post(ctx, mockURL+"/chat/completions", "", nil, chatBody(model, nonce))
	s.Latency = time.Since(start)
	if err != nil {
		s.Err = err.Error()
		return s
	}
	s.Status = resp.StatusCode
	return s
}

func nonceFor(prefix string, i int) string { return prefix + "-" + strconv.Itoa(i) }
