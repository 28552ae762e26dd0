package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/routerhq/router/internal/testdb"
)

const apiKey = "e2e-key"

// routerProc is one router process.
type routerProc struct {
	cmd  *exec.Cmd
	base string
	log  *bytes.Buffer
	done chan struct{}
}

type procOptions struct {
	dbURL      string
	llm        *fakeLLM
	hedgeAfter string
	lease      string
	// webhook, when set, is acme's webhook URL (secret e2eWebhookSecret).
	webhook string
	// gateOff turns the conformance gate off, so that llm-b (which has no
	// conformance run) is eligible and the route can hedge and fail over to
	// it. With the gate on (the default), every job runs on llm-a alone.
	gateOff bool
}

const e2eWebhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// startRouter writes a config and starts `router serve`, returning once it is
// ready (GET /readyz answers 200).
func startRouter(t *testing.T, o procOptions) *routerProc {
	t.Helper()
	addr := freeAddr(t)
	prompts, _ := filepath.Abs("../../prompts")
	hedge := ""
	if o.hedgeAfter != "" {
		hedge = "    hedge_after: " + o.hedgeAfter + "\n"
	}
	if o.lease == "" {
		o.lease = "1500ms"
	}
	gate := ""
	if o.gateOff {
		gate = "conformance: {gate: \"off\"}\n"
	}
	hook := ""
	if o.webhook != "" {
		hook = fmt.Sprintf(", webhook: {url: %q, secret_env: E2E_WEBHOOK_SECRET}", o.webhook)
	}
	cfg := fmt.Sprintf(`listen: %s
ops_listen: 127.0.0.1:0
database_url: %q
api_keys: [{owner: acme, key_env: E2E_API_KEY%s}]
providers:
  - {name: llm-a, type: openai, base_url: %q, model: model-a, timeout: 30s, max_retries: 0}
  - {name: llm-b, type: openai, base_url: %q, model: model-b, timeout: 30s, max_retries: 0}
routes:
  default:
    providers: [llm-a, llm-b]
%s    max_inflight: 2
    max_attempts: 4
prompts_dir: %q
%sexecution: {lease: %s}
retention: {leader_lease: 2s}
log: {level: warn}
`, addr, o.dbURL, hook, o.llm.url(), o.llm.url(), hedge, prompts, gate, o.lease)
	return launch(t, addr, cfg)
}

// freeAddr is a loopback address free at the time of the call.
func freeAddr(t *testing.T) string {
	t.Helper()
	return testdb.FreeAddr(t) // below the ephemeral range: a restart rebinds it
}

// launch writes cfg and starts `router serve` listening on addr, returning
// once it is ready (GET /readyz answers 200).
func launch(t *testing.T, addr, cfg string) *routerProc {
	t.Helper()
	path := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &routerProc{base: "http://" + addr, log: &bytes.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(routerBin, "serve", "--config", path)
	p.cmd.Env = append(os.Environ(), "E2E_API_KEY="+apiKey, "E2E_WEBHOOK_SECRET="+e2eWebhookSecret, "DATABASE_URL=")
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("router %s log:\n%s", addr, p.log.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(p.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("router exited during start-up:\n%s", p.log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("router not ready within 60s:\n%s", p.log.String())
		}
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *routerProc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

func (r reply) job() string { s, _ := r.body["id"].(string); return s }

func (p *routerProc) do(t *testing.T, method, path, body string, hdr ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, p.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return reply{}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return reply{status: resp.StatusCode, header: resp.Header, body: m, raw: raw}
}

func triage(subject string) string {
	return `{"prompt":"triage","input":{"subject":"` + subject + `","body":"Please help."}}`
}
