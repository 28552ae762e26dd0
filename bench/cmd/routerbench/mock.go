package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// validTriage is an output that passes the triage prompt's schema and contract;
// chat routes accept it too.
const validTriage = `{"category":"technical","priority":"high","summary":"Customer cannot log in after the password reset.","needs_human":false}`

// Behaviour is how the mock answers calls for one model: a latency
// distribution and a fault mix. Faults are drawn per call.
type Behaviour struct {
	Median time.Duration // median latency (0: answer at once)
	Sigma  float64       // log-normal shape; 0 makes the latency fixed at Median
	Hang   float64       // fraction of calls held until the caller gives up
	Status float64       // fraction of calls answered 503
	// Chunks is how many content chunks a streamed answer is sent in (0 or
	// 1: the whole content in one), as a provider streams an answer token by
	// token; at most one per character.
	Chunks int
}

func (b Behaviour) latency(r *rand.Rand) time.Duration {
	if b.Median <= 0 {
		return 0
	}
	if b.Sigma <= 0 {
		return b.Median
	}
	return time.Duration(float64(b.Median) * math.Exp(b.Sigma*r.NormFloat64()))
}

// Mock is a loopback OpenAI-compatible provider. The model of a call picks its
// Behaviour; it counts calls per model and per nonce, remembers each call's
// own service time (by nonce), and keeps completed calls that carried a
// router_attempt_id so the router's reconciliation can look them up.
type Mock struct {
	srv *http.Server
	url string

	behaviour atomic.Pointer[map[string]Behaviour]
	calls     sync.Map // model -> *atomic.Int64
	hangs     atomic.Int64
	errors    atomic.Int64
	webhooks  atomic.Int64 // completion events taken
	maxHang   time.Duration

	mu      sync.Mutex
	service map[string]time.Duration // nonce -> handler time of its last successful call
	byNonce map[string]int           // nonce -> calls
	stored  map[string][]byte        // attempt id -> completion
}

// StartMock listens on a loopback port.
func StartMock(maxHang time.Duration) (*Mock, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &Mock{maxHang: maxHang, service: map[string]time.Duration{}, byNonce: map[string]int{}, stored: map[string][]byte{}}
	m.SetBehaviour(map[string]Behaviour{})
	m.url = "http://" + ln.Addr().String() + "/v1"
	m.srv = &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

// URL is the provider base URL (ends in /v1).
func (m *Mock) URL() string { return m.url }

// Close stops the server, ending held calls.
func (m *Mock) Close() { _ = m.srv.Close() }

// SetBehaviour replaces the per-model behaviour (unlisted models: instant, healthy).
func (m *Mock) SetBehaviour(b map[string]Behaviour) { m.behaviour.Store(&b) }

// Reset forgets counters and recorded calls.
func (m *Mock) Reset() {
	m.calls.Range(func(k, _ any) bool { m.calls.Delete(k); return true })
	m.hangs.Store(0)
	m.errors.Store(0)
	m.mu.Lock()
	m.service, m.byNonce, m.stored = map[string]time.Duration{}, map[string]int{}, map[string][]byte{}
	m.mu.Unlock()
}

// Calls returns the number of calls per model since the last Reset.
func (m *Mock) Calls() map[string]int64 {
	out := map[string]int64{}
	m.calls.Range(func(k, v any) bool { out[k.(string)] = v.(*atomic.Int64).Load(); return true })
	return out
}

// TotalCalls sums Calls.
func (m *Mock) TotalCalls() int64 {
	var n int64
	for _, c := range m.Calls() {
		n += c
	}
	return n
}

// Service is the mock's own time for the last successful call of nonce.
func (m *Mock) Service(nonce string) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.service[nonce]
	return d, ok
}

type mockRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Metadata      map[string]string `json:"metadata"`
	Stream        bool              `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// WebhookURL is where the mock takes completion events (answering 204).
func (m *Mock) WebhookURL() string { return strings.TrimSuffix(m.url, "/v1") + "/webhook" }

// Webhooks is how many completion events the mock took.
func (m *Mock) Webhooks() int64 { return m.webhooks.Load() }

func (m *Mock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/webhook" {
		_, _ = io.Copy(io.Discard, r.Body)
		m.webhooks.Add(1)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	if r.Method == http.MethodGet {
		m.lookup(w, r)
		return
	}
	start := time.Now()
	var req mockRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	nonce := ""
	for _, msg := range req.Messages {
		if n := nonceOf(msg.Content); n != "" {
			nonce = n
		}
	}
	c, _ := m.calls.LoadOrStore(req.Model, new(atomic.Int64))
	n := c.(*atomic.Int64).Add(1)
	if nonce != "" {
		m.mu.Lock()
		m.byNonce[nonce]++
		m.mu.Unlock()
	}
	b := (*m.behaviour.Load())[req.Model]
	rnd := rand.New(rand.NewPCG(uint64(start.UnixNano()), uint64(n)))
	roll := rnd.Float64()
	switch {
	case roll < b.Hang:
		m.hangs.Add(1)
		t := time.NewTimer(m.maxHang)
		defer t.Stop()
		select {
		case <-r.Context().Done():
		case <-t.C:
		}
		return
	case roll < b.Hang+b.Status:
		m.errors.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"message":"overloaded (bench mock)","type":"server_error"}}`))
		return
	}
	if d := b.latency(rnd); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	body := fmt.Appendf(nil, `{"id":"chatcmpl-bench-%s-%d","object":"chat.completion","created":%d,"model":%q,`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70}}`,
		req.Model, n, start.Unix(), req.Model, validTriage)
	if id := req.Metadata["router_attempt_id"]; id != "" {
		m.mu.Lock()
		m.stored[id] = body
		m.mu.Unlock()
	}
	if req.Stream {
		m.stream(w, req, n, start, b.Chunks)
	} else {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}
	if nonce != "" {
		own := time.Since(start)
		m.mu.Lock()
		m.service[nonce] = own
		m.mu.Unlock()
	}
}

// stream answers as OpenAI's server-sent events: the content in chunks
// content chunks (splitContent), the finish reason, the usage when asked for,
// then [DONE].
func (m *Mock) stream(w http.ResponseWriter, req mockRequest, n int64, start time.Time, chunks int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	id := fmt.Sprintf("chatcmpl-bench-%s-%d", req.Model, n)
	chunk := func(choices, usage string) string {
		return fmt.Sprintf(`data: {"id":%q,"object":"chat.completion.chunk","created":%d,"model":%q,"choices":[%s]%s}`+"\n\n",
			id, start.Unix(), req.Model, choices, usage)
	}
	var b strings.Builder
	for i, part := range splitContent(validTriage, chunks) {
		role := ""
		if i == 0 {
			role = `"role":"assistant",`
		}
		b.WriteString(chunk(fmt.Sprintf(`{"index":0,"delta":{%s"content":%q},"finish_reason":null}`, role, part), ""))
	}
	b.WriteString(chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`, ""))
	if req.StreamOptions.IncludeUsage {
		b.WriteString(chunk("", `,"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70}`))
	}
	b.WriteString("data: [DONE]\n\n")
	_, _ = w.Write([]byte(b.String()))
}

// splitContent splits s into n non-empty parts of about the same length, cut
// between characters (one part for n < 2, one per character at most).
func splitContent(s string, n int) []string {
	runes := []rune(s)
	n = min(max(n, 1), len(runes))
	if n <= 1 {
		return []string{s}
	}
	parts := make([]string, 0, n)
	for i := range n {
		parts = append(parts, string(runes[i*len(runes)/n:(i+1)*len(runes)/n]))
	}
	return parts
}

// lookup answers the stored-completions list filtered by the attempt id, which
// is what the router's reconciliation asks.
func (m *Mock) lookup(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("metadata[router_attempt_id]")
	m.mu.Lock()
	body, ok := m.stored[id]
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		_, _ = w.Write([]byte(`{"object":"list","data":[]}`))
		return
	}
	// A stored completion lists the metadata it was sent with; the router
	// trusts only a record carrying the attempt's id.
	meta, _ := json.Marshal(map[string]string{"router_attempt_id": id})
	stored := bytes.Replace(body, []byte(`"object":"chat.completion",`),
		append(append([]byte(`"object":"chat.completion","metadata":`), meta...), ','), 1)
	_, _ = w.Write([]byte(`{"object":"list","data":[` + string(stored) + `]}`))
}

// nonceOf extracts "nonce=<nonce>;" from a message.
func nonceOf(s string) string {
	i := strings.Index(s, "nonce=")
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(s[i:], ';')
	if j < 0 {
		return ""
	}
	return s[i+6 : i+j]
}
