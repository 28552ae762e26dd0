package api_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// SPEC §5.3, §5.4: one Idempotency-Key sent at once with two different
// requests, each to both replicas (two callers per request and replica, so
// the claims meet across replicas and inside one replica's group commit),
// makes exactly one job. Every caller of the request that claimed the key
// gets that job; every caller of the other gets 409 idempotency-key-reused
// naming the key, and nothing of the job.
func TestReplicaSameKeyTwoBodiesMakeOneJob(t *testing.T) {
	a, b := replicas(t, options{})
	urls := []string{a.srv.URL, b.url}
	const rounds = 4
	for round := range rounds {
		key := fmt.Sprintf("two-bodies-%d", round)
		type sent struct {
			subject string
			reply
		}
		replies := make([]sent, 8)
		fns := make([]func(), len(replies))
		for i := range replies {
			subject, url := fmt.Sprintf("intent %d", i%2), urls[i/2%2]
			fns[i] = func() {
				replies[i] = sent{subject, call(t, url, "POST", "/v1/jobs", triageBody(subject),
					"Idempotency-Key", key, "Prefer", "wait=30")}
			}
		}
		together(fns...)
		id := oneJob(t, a, round, "triage", key)
		var subject string
		if err := a.db.Pool.QueryRow(context.Background(), `SELECT input->>'subject' FROM jobs WHERE id = $1`, id).Scan(&subject); err != nil {
			t.Fatal(err)
		}
		created := 0
		for _, s := range replies {
			switch s.status {
			case http.StatusCreated, http.StatusOK:
				if s.subject != subject || s.job() != id || s.header.Get("X-Router-Job-Id") != id {
					t.Errorf("round %d: a request for %q got %d with job %q (header %q); the key holds job %s for %q",
						round, s.subject, s.status, s.job(), s.header.Get("X-Router-Job-Id"), id, subject)
				}
				if s.header.Get("Idempotent-Replayed") != "true" {
					created++
					if s.status != http.StatusCreated {
						t.Errorf("round %d: a reply that is no replay has status %d, want 201", round, s.status)
					}
				}
			case http.StatusConflict:
				if s.subject == subject {
					t.Errorf("round %d: the request that holds the key was refused: %s", round, s.raw)
				}
				if d, _ := s.body["detail"].(string); problemType(s.reply) != "idempotency-key-reused" || !strings.Contains(d, strconv.Quote(key)) {
					t.Errorf("round %d: 409 is not idempotency-key-reused naming %q: %s", round, key, s.raw)
				}
				if _, ok := s.body["id"]; ok || s.header.Get("X-Router-Job-Id") != "" || strings.Contains(string(s.raw), id) {
					t.Errorf("round %d: a 409 for another request reveals the job: %v %s", round, s.header, s.raw)
				}
			default:
				t.Errorf("round %d: %d %s, want the job or 409", round, s.status, s.raw)
			}
		}
		if created != 1 {
			t.Errorf("round %d: %d replies claim to have created the job, want 1", round, created)
		}
		succeededOnce(t, a, round, id)
	}
	oneCallPerJob(t, a, b, rounds)
}

// SPEC §5.2, §5.4: one request sent at once by eight callers, half to each
// replica, makes one job and one provider call; every reply names the job,
// exactly one (201) created it, and every reply, the creator's answer from
// its win included, is the same bytes, as is a later replay on either
// replica (docs/race.md, "Answering from the win": the job the win returns is
// the job a read returns, byte for byte).
func TestReplicaSameKeySameBodyMakeOneJob(t *testing.T) {
	a, b := replicas(t, options{})
	urls := []string{a.srv.URL, b.url}
	const rounds, callers = 4, 8
	for round := range rounds {
		key, body := fmt.Sprintf("same-body-%d", round), triageBody(fmt.Sprintf("one intent %d", round))
		replies := make([]reply, callers)
		fns := make([]func(), callers)
		for i := range fns {
			fns[i] = func() {
				replies[i] = call(t, urls[i%2], "POST", "/v1/jobs", body, "Idempotency-Key", key, "Prefer", "wait=30")
			}
		}
		together(fns...)
		id := oneJob(t, a, round, "triage", key)
		created := 0
		for i, r := range replies {
			if r.job() != id || r.header.Get("X-Router-Job-Id") != id {
				t.Errorf("round %d, replica %c: %d names job %q (header %q), want %s: %s",
					round, 'A'+i%2, r.status, r.job(), r.header.Get("X-Router-Job-Id"), id, r.raw)
			}
			switch {
			case r.header.Get("Idempotent-Replayed") != "true":
				created++
				if r.status != http.StatusCreated {
					t.Errorf("round %d: the creator's reply is %d, want 201", round, r.status)
				}
			case r.status != http.StatusOK:
				t.Errorf("round %d: a replay of the ended job is %d, want 200", round, r.status)
			}
			if !bytes.Equal(r.raw, replies[0].raw) {
				t.Errorf("round %d: replies differ:\n%s\n%s", round, r.raw, replies[0].raw)
			}
		}
		if created != 1 {
			t.Errorf("round %d: %d replies claim to have created the job, want 1", round, created)
		}
		for _, url := range urls {
			later := call(t, url, "POST", "/v1/jobs", body, "Idempotency-Key", key)
			if later.status != http.StatusOK || later.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(later.raw, replies[0].raw) {
				t.Errorf("round %d: a later replay: %d %v\n%s\nwant 200, the same bytes as\n%s", round, later.status, later.header, later.raw, replies[0].raw)
			}
		}
		succeededOnce(t, a, round, id)
	}
	oneCallPerJob(t, a, b, rounds)
}

// SPEC §6.5, docs/api.md (cancel): a cancel on one replica races the win of
// the job's only attempt on the other (its provider call, held until the race
// starts, answers valid). The job ends in one state that its attempts and
// the cancel's reply agree with: cancelled (the cancel answered 200, and no
// attempt won) or succeeded (the cancel answered 409 job-finished, and the
// attempt completed_by names won). Never a won attempt on a cancelled job.
// Even jobs are cancelled before the gate opens, while their provider calls
// are held: the cancel has committed before the answer comes, so the job must
// end cancelled (asserted). Odd jobs are cancelled once the provider has
// answered (its win is being validated and written): a real race, either
// outcome, consistent.
func TestReplicaCancelRacesWin(t *testing.T) {
	g := newGate()
	defer g.release()
	a, b := replicas(t, options{respond: g.respond(false)})
	urls := []string{a.srv.URL, b.url}
	const jobs = 6
	ids := createJobs(t, urls, "cancel-win", jobs, "wait=0", http.StatusAccepted, "")
	g.await(t, jobs)
	cancels := make([]reply, jobs)
	for i, id := range ids {
		if i%2 == 0 {
			cancels[i] = call(t, urls[(i+1)%2], "POST", "/v1/jobs/"+id+"/cancel", "")
		}
	}
	fns := []func(){g.release}
	for i, id := range ids {
		if i%2 == 1 {
			fns = append(fns, func() {
				<-g.answering(id)
				cancels[i] = call(t, urls[(i+1)%2], "POST", "/v1/jobs/"+id+"/cancel", "")
			})
		}
	}
	together(fns...)
	quiesce(a.runner, b.runner)
	seen := map[string]int{}
	for i, id := range ids {
		o := settledJob(t, a, id)
		seen[o.state]++
		if i%2 == 0 && o.state != store.JobCancelled {
			t.Errorf("job %s was cancelled before its provider answered, yet ended %s", id, o.state)
		}
		c := cancels[i]
		switch o.state {
		case store.JobCancelled:
			if c.status != http.StatusOK || c.body["state"] != store.JobCancelled {
				t.Errorf("job %s ended cancelled, but its cancel answered %d %s", id, c.status, c.raw)
			}
		case store.JobSucceeded:
			if c.status != http.StatusConflict || problemType(c) != "job-finished" {
				t.Errorf("job %s ended succeeded, but its cancel answered %d %s, want 409 job-finished", id, c.status, c.raw)
			}
		}
		if o.attempts != 1 || g.callsFor(id) != 1 {
			t.Errorf("job %s: %d attempts and %d provider calls, want 1 and 1", id, o.attempts, g.callsFor(id))
		}
		for r, url := range urls {
			if got := call(t, url, "GET", "/v1/jobs/"+id, ""); got.body["state"] != o.state {
				t.Errorf("replica %c reads job %s as %v, the database holds %s", 'A'+r, id, got.body["state"], o.state)
			}
		}
	}
	t.Logf("outcomes: %v", seen)
}

// docs/api.md (retry, cancel): a failed job gets two retries, one on each
// replica, and a cancel, all at once. Exactly one retry starts a new run
// (200); the other is refused 409 (not-retryable, or attempt-blocked while the
// new run's attempt is starting). The run makes at most one new attempt, and
// the job ends consistent with the cancel's reply: cancelled (200) with no
// attempt won, or, when the cancel came while the job was still failed (409
// job-finished), succeeded by the new run's attempt.
func TestReplicaRetryRacesRetryAndCancel(t *testing.T) {
	g := newGate()
	defer g.release()
	a, b := replicas(t, options{respond: g.respond(true)})
	urls := []string{a.srv.URL, b.url}
	const jobs = 4
	ids := createJobs(t, urls, "retry-race", jobs, "wait=30", http.StatusCreated, store.JobFailed)
	retries := make([][2]reply, jobs)
	cancels := make([]reply, jobs)
	var fns []func()
	for i, id := range ids {
		for r, url := range urls {
			fns = append(fns, func() { retries[i][r] = call(t, url, "POST", "/v1/jobs/"+id+"/retry", "", "Prefer", "wait=0") })
		}
		fns = append(fns, func() { cancels[i] = call(t, urls[i%2], "POST", "/v1/jobs/"+id+"/cancel", "") })
	}
	together(fns...)
	g.release() // the new runs' provider calls answer only now, after every reply
	quiesce(a.runner, b.runner)
	seen := map[string]int{}
	for i, id := range ids {
		started := 0
		for r, got := range retries[i] {
			switch {
			case got.status == http.StatusOK && got.job() == id:
				started++
			case got.status == http.StatusConflict && (problemType(got) == "not-retryable" || problemType(got) == "attempt-blocked"):
			default:
				t.Errorf("job %s: retry on replica %c answered %d %s", id, 'A'+r, got.status, got.raw)
			}
		}
		if started != 1 {
			t.Errorf("job %s: %d retries started a run, want exactly 1: %s / %s", id, started, retries[i][0].raw, retries[i][1].raw)
		}
		o := settledJob(t, a, id)
		seen[o.state]++
		c := cancels[i]
		switch {
		case c.status == http.StatusOK:
			if o.state != store.JobCancelled {
				t.Errorf("job %s: the cancel answered 200, the job ended %s", id, o.state)
			}
		case c.status == http.StatusConflict && problemType(c) == "job-finished":
			if o.state != store.JobSucceeded || o.attempts != 2 {
				t.Errorf("job %s: cancelled while failed (409), the retried job ended %s with %d attempts, want succeeded with 2", id, o.state, o.attempts)
			}
		default:
			t.Errorf("job %s: the cancel answered %d %s", id, c.status, c.raw)
		}
		if o.attempts > 2 || g.callsFor(id) > 2 {
			t.Errorf("job %s: %d attempts and %d provider calls after one retry, want at most 2 each", id, o.attempts, g.callsFor(id))
		}
	}
	t.Logf("outcomes: %v", seen)
}

// docs/api.md (resolve, cancel): the unknown attempt of a job is resolved as
// succeeded on one replica while the job is cancelled on the other. Exactly
// one of them takes effect: either the resolution (200; the cancel 409
// job-finished) and the attempt won, or the cancel (200; the resolution 409
// not-unknown) and no attempt won. No new attempt starts either way.
func TestReplicaResolveRacesCancel(t *testing.T) {
	hang := func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} }
	a, b := replicas(t, options{timeout: 50 * time.Millisecond, respond: hang})
	urls := []string{a.srv.URL, b.url}
	const jobs = 4
	ids := createJobs(t, urls, "resolve-cancel", jobs, "wait=30", http.StatusAccepted, store.JobUnknown)
	resolves, cancels := make([]reply, jobs), make([]reply, jobs)
	var fns []func()
	for i, id := range ids {
		fns = append(fns,
			func() {
				resolves[i] = call(t, urls[i%2], "POST", "/v1/jobs/"+id+"/attempts/1/resolve", `{"outcome":"succeeded","result":`+validTriage+`}`)
			},
			func() { cancels[i] = call(t, urls[(i+1)%2], "POST", "/v1/jobs/"+id+"/cancel", "") })
	}
	together(fns...)
	quiesce(a.runner, b.runner)
	seen := map[string]int{}
	for i, id := range ids {
		o := settledJob(t, a, id)
		seen[o.state]++
		res, c := resolves[i], cancels[i]
		switch o.state {
		case store.JobSucceeded:
			if res.status != http.StatusOK || c.status != http.StatusConflict || problemType(c) != "job-finished" {
				t.Errorf("job %s ended succeeded: resolve %d %s, cancel %d %s; want 200 and 409 job-finished", id, res.status, res.raw, c.status, c.raw)
			}
		case store.JobCancelled:
			if c.status != http.StatusOK || res.status != http.StatusConflict || problemType(res) != "not-unknown" {
				t.Errorf("job %s ended cancelled: cancel %d %s, resolve %d %s; want 200 and 409 not-unknown", id, c.status, c.raw, res.status, res.raw)
			}
		}
		if o.attempts != 1 {
			t.Errorf("job %s: %d attempts, want 1 (neither the resolution nor the cancel starts one)", id, o.attempts)
		}
	}
	oneCallPerJob(t, a, b, jobs)
	t.Logf("outcomes: %v", seen)
}

// docs/idempotency.md (Retention), docs/api.md (retry): a failed job's key
// has expired; the same request under it, sent to one replica, races a retry
// of the old job on the other. One key never has two live jobs: either the
// retry takes the key back first (200; the request replays the old job,
// which runs again) or the request takes the key over (a new job; the retry
// is 409 idempotency-key-rebound naming it, and the old job never runs
// again).
func TestReplicaExpiredKeyTakeoverRacesRetry(t *testing.T) {
	g := newGate()
	g.release() // no call is held: each job's first call fails, later ones succeed
	a, b := replicas(t, options{respond: g.respond(true)})
	urls := []string{a.srv.URL, b.url}
	const keys = 4
	olds := createJobs(t, urls, "takeover", keys, "wait=30", http.StatusCreated, store.JobFailed)
	tag, err := a.db.Pool.Exec(context.Background(), `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'
		WHERE idempotency_key LIKE 'takeover-%'`)
	if err != nil || tag.RowsAffected() != keys {
		t.Fatalf("expire the keys: %v (%d rows)", err, tag.RowsAffected())
	}
	creates, retries := make([]reply, keys), make([]reply, keys)
	var fns []func()
	for i, old := range olds {
		key := fmt.Sprintf("takeover-%d", i) // the request createJobs sent, again
		fns = append(fns,
			func() {
				creates[i] = call(t, urls[(i+1)%2], "POST", "/v1/jobs", triageBody(key), "Idempotency-Key", key, "Prefer", "wait=0")
			},
			func() { retries[i] = call(t, urls[i%2], "POST", "/v1/jobs/"+old+"/retry", "", "Prefer", "wait=0") })
	}
	together(fns...)
	quiesce(a.runner, b.runner)
	seen := map[string]int{}
	for i, old := range olds {
		key := fmt.Sprintf("takeover-%d", i)
		c, r := creates[i], retries[i]
		jobs, _ := keyJobs(t, a, "triage", key)
		holder := keyHolder(t, a, "triage", key)
		o := settledJob(t, a, old)
		switch r.status {
		case http.StatusOK:
			seen["retried"]++
			if (c.status != http.StatusOK && c.status != http.StatusAccepted) || c.job() != old || c.header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("%s: the retry took the key back, but the request answered %d %v %s, want a replay of job %s", key, c.status, c.header, c.raw, old)
			}
			if jobs != 1 || holder != old || o.state != store.JobSucceeded || o.attempts != 2 {
				t.Errorf("%s: retried: %d jobs, key bound to %s, old job %s with %d attempts; want 1, %s, succeeded with 2",
					key, jobs, holder, o.state, o.attempts, old)
			}
		case http.StatusConflict:
			seen["taken over"]++
			d, _ := r.body["detail"].(string)
			if problemType(r) != "idempotency-key-rebound" || c.job() == "" || !strings.Contains(d, c.job()) {
				t.Errorf("%s: the retry answered %s, want idempotency-key-rebound naming the new job %q", key, r.raw, c.job())
			}
			if c.status != http.StatusAccepted || c.job() == old || c.header.Get("Idempotent-Replayed") == "true" {
				t.Errorf("%s: the request answered %d %v %s, want 202 with a new job", key, c.status, c.header, c.raw)
			}
			if jobs != 2 || holder != c.job() || o.state != store.JobFailed || o.attempts != 1 {
				t.Errorf("%s: taken over: %d jobs, key bound to %s, old job %s with %d attempts; want 2, %s, failed with 1",
					key, jobs, holder, o.state, o.attempts, c.job())
			}
			settledJob(t, a, c.job())
		default:
			t.Errorf("%s: the retry answered %d %s", key, r.status, r.raw)
		}
	}
	t.Logf("outcomes: %v", seen)
}

// docs/chat.md (Idempotency), docs/idempotency.md (Scope): a chat call's key
// lives in the scope (owner, "chat:<route>", key), a job's in (owner,
// prompt, key). A chat call and a job request with one key, each sent at
// once to both replicas, make two jobs, one per scope, and neither is a 409;
// the chat callers get byte-identical completions, the job callers one job.
func TestReplicaChatAndJobsKeysAreSeparate(t *testing.T) {
	a, b := replicas(t, options{})
	urls := []string{a.srv.URL, b.url}
	const rounds, callers = 3, 4
	for round := range rounds {
		key := fmt.Sprintf("shared-%d", round)
		chatBody := fmt.Sprintf(`{"model":"default","messages":[{"role":"user","content":"Cannot log in, round %d"}]}`, round)
		chats, jobReplies := make([]reply, callers), make([]reply, callers)
		var fns []func()
		for i := range callers {
			fns = append(fns,
				func() {
					chats[i] = call(t, urls[i%2], "POST", "/v1/chat/completions", chatBody, "Idempotency-Key", key)
				},
				func() {
					jobReplies[i] = call(t, urls[(i+1)%2], "POST", "/v1/jobs", triageBody("Cannot log in"),
						"Idempotency-Key", key, "Prefer", "wait=30")
				})
		}
		together(fns...)
		chatJob, triageJob := oneJob(t, a, round, "chat:default", key), oneJob(t, a, round, "triage", key)
		if n := a.count(t, `SELECT count(*) FROM jobs WHERE idempotency_key = $1`, key); n != 2 {
			t.Fatalf("round %d: %d jobs under the key, want 2 (one per scope)", round, n)
		}
		created := 0
		for i, r := range chats {
			if r.status != http.StatusOK || r.header.Get("X-Router-Job-Id") != chatJob || !bytes.Equal(r.raw, chats[0].raw) {
				t.Errorf("round %d, chat on replica %c: %d job %q %s; want 200, job %s, the same bytes as\n%s",
					round, 'A'+i%2, r.status, r.header.Get("X-Router-Job-Id"), r.raw, chatJob, chats[0].raw)
			}
			if r.header.Get("Idempotent-Replayed") != "true" {
				created++
			}
		}
		if created != 1 {
			t.Errorf("round %d: %d chat replies are not replays, want 1", round, created)
		}
		created = 0
		for i, r := range jobReplies {
			if (r.status != http.StatusCreated && r.status != http.StatusOK) || r.job() != triageJob {
				t.Errorf("round %d, job request on replica %c: %d %s, want job %s", round, 'A'+(i+1)%2, r.status, r.raw, triageJob)
			}
			if r.header.Get("Idempotent-Replayed") != "true" {
				created++
			}
		}
		if created != 1 {
			t.Errorf("round %d: %d job replies are not replays, want 1", round, created)
		}
		succeededOnce(t, a, round, chatJob)
		succeededOnce(t, a, round, triageJob)
	}
	oneCallPerJob(t, a, b, 2*rounds)
}
