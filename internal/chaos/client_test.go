package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/routerhq/router/internal/chaos"
)

// intent is one thing a client wants done: the same request, under the same
// key, however many times it is sent.
type intent struct {
	owner int // index into owners
	chat  bool
	key   string
	body  string
}

func (in intent) path() string {
	if in.chat {
		return "/v1/chat/completions"
	}
	return "/v1/jobs"
}

// ledger is what the clients saw: every job id acknowledged, per key, and the
// violations visible from outside (two jobs for one key, a 409 for an
// identical request, two different completions for one chat key).
type ledger struct {
	mu          sync.Mutex
	jobs        map[string]string // owner/key -> job id
	completions map[string]string // owner/key -> chat completion id
	acks        []chaos.Ack
	violations  []chaos.Violation

	requests, intents, retries, netErrors, serverErrors atomic.Int64
	gaveUpJobs, gaveUpChats                             atomic.Int64
	succeeded, accepted                                 atomic.Int64
}

func newLedger() *ledger {
	return &ledger{jobs: map[string]string{}, completions: map[string]string{}}
}

const (
	ruleKeySplit       = "client-sees-one-job-per-key"
	ruleReplayMismatch = "client-sees-one-completion-per-key"
	ruleUnexpected     = "client-gets-no-unexpected-status"
)

func (l *ledger) violate(rule, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.violations = append(l.violations, chaos.Violation{Rule: rule, Detail: fmt.Sprintf(format, args...)})
}

func (l *ledger) ack(in intent, jobID string) {
	owner := owners[in.owner].name
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acks = append(l.acks, chaos.Ack{Owner: owner, Key: in.key, JobID: jobID})
	k := owner + "/" + in.key
	if prev, ok := l.jobs[k]; ok && prev != jobID {
		l.violations = append(l.violations, chaos.Violation{Rule: ruleKeySplit,
			Detail: fmt.Sprintf("key %s answered with job %s and job %s", k, prev, jobID)})
	}
	l.jobs[k] = jobID
}

func (l *ledger) completion(in intent, id string) {
	k := owners[in.owner].name + "/" + in.key
	l.mu.Lock()
	defer l.mu.Unlock()
	if prev, ok := l.completions[k]; ok && prev != id {
		l.violations = append(l.violations, chaos.Violation{Rule: ruleReplayMismatch,
			Detail: fmt.Sprintf("key %s answered with completion %s and %s", k, prev, id)})
	}
	l.completions[k] = id
}

// client sends intents to the replicas the way a careful real client does:
// on a network error, a 429 or a 5xx it sends the same request with the same
// key again, after capped exponential backoff with jitter, to the next replica
// (as a load balancer would), a bounded number of times.
type client struct {
	bases []string
	http  *http.Client
	l     *ledger
}

const maxTries = 8

func (c *client) send(ctx context.Context, in intent, first int) {
	for try := range maxTries {
		if try > 0 {
			c.l.retries.Add(1)
			backoff := min(50*time.Millisecond<<try, time.Second)
			select {
			case <-time.After(time.Duration(rand.Int64N(int64(backoff)))):
			case <-ctx.Done():
				return
			}
		}
		if done := c.once(ctx, in, c.bases[(first+try)%len(c.bases)]); done {
			return
		}
		if ctx.Err() != nil {
			return
		}
	}
	if in.chat {
		c.l.gaveUpChats.Add(1)
	} else {
		c.l.gaveUpJobs.Add(1)
	}
}

// once sends the request once and reports whether the intent is settled (an
// answer that retrying would not change).
func (c *client) once(ctx context.Context, in intent, base string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+in.path(), strings.NewReader(in.body))
	if err != nil {
		c.l.violate(ruleUnexpected, "build the request for %s: %v", base, err)
		return true
	}
	req.Header.Set("Authorization", "Bearer "+owners[in.owner].key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", in.key)
	if !in.chat {
		req.Header.Set("Prefer", "wait=2")
	}
	c.l.requests.Add(1)
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			c.l.netErrors.Add(1)
		}
		return false
	}
	raw, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	if rerr != nil {
		c.l.netErrors.Add(1)
		return false
	}
	if in.chat {
		if id := resp.Header.Get("X-Router-Job-Id"); id != "" {
			c.l.ack(in, id)
		}
	}
	switch st := resp.StatusCode; {
	case st == http.StatusTooManyRequests || st >= 500:
		c.l.serverErrors.Add(1)
		return false
	case st == http.StatusOK || st == http.StatusCreated || st == http.StatusAccepted:
		var body struct {
			ID    string `json:"id"`
			State string `json:"state"`
		}
		if err := json.Unmarshal(raw, &body); err != nil || body.ID == "" {
			c.l.violate(ruleUnexpected, "%s %s: %d with a body that is not the resource: %.200s", in.path(), in.key, st, raw)
			return true
		}
		if in.chat {
			c.l.completion(in, body.ID)
			c.l.succeeded.Add(1)
			return true
		}
		c.l.ack(in, body.ID)
		if body.State == "succeeded" {
			c.l.succeeded.Add(1)
		} else {
			c.l.accepted.Add(1)
		}
		return true
	default:
		c.l.violate(ruleUnexpected, "%s key %s: %d %.300s", in.path(), in.key, st, raw)
		return true
	}
}
