package chaos_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/testdb"
)

// owners and their API keys, as the replicas' configuration names them.
var owners = []struct{ name, key, env string }{
	{"acme", "chaos-acme-key", "CHAOS_ACME_KEY"},
	{"globex", "chaos-globex-key", "CHAOS_GLOBEX_KEY"},
}

// replica is one `router serve` process, restartable on the same address.
type replica struct {
	name, base, cfgPath, logPath string

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	killing  bool     // the run killed it: its exit is expected
	exited   []string // unexpected exits, with the log's tail
	startups int
}

// freeAddr is a free loopback address.
func freeAddr(t *testing.T) string {
	t.Helper()
	return testdb.FreeAddr(t) // below the ephemeral range: a restart rebinds it
}

// hasConfigField reports whether the router's configuration accepts a top-level
// field, so the run keeps working as the format grows (e.g. ops_listen).
func hasConfigField(name string) bool {
	ty := reflect.TypeFor[config.Config]()
	for i := range ty.NumField() {
		if tag, _, _ := strings.Cut(ty.Field(i).Tag.Get("yaml"), ","); tag == name {
			return true
		}
	}
	return false
}

// newReplica writes the replica's configuration; start runs it.
func newReplica(t *testing.T, name, dbURL string, a, b *fakeProvider) *replica {
	t.Helper()
	dir := t.TempDir()
	addr := freeAddr(t)
	prompts, err := filepath.Abs("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range owners {
		keys = append(keys, fmt.Sprintf("{owner: %s, key_env: %s}", o.name, o.env))
	}
	ops := ""
	if hasConfigField("ops_listen") { // three replicas on one host need three operator ports
		ops = "ops_listen: " + freeAddr(t) + "\n"
	}
	provider := func(p *fakeProvider) string {
		return fmt.Sprintf(`  - {name: %s, type: openai, base_url: %q, model: model-%s, timeout: 3s, stream_idle_timeout: 2s,
     max_retries: 1, breaker: {consecutive_failures: 5, open_for: 1s, half_open_probes: 1}}
`, p.name, p.url(), p.name)
	}
	cfg := fmt.Sprintf(`listen: %s
%sdatabase_url: %q
idempotency: {retention: 24h}
http: {default_wait: 0s, max_wait: 10s}
api_keys: [%s]
providers:
%s%sroutes:
  default:
    providers: [%s, %s]
    hedge_after: 300ms
    max_inflight: 2
    max_attempts: 4
    deadline: 20s
prompts_dir: %q
conformance: {gate: "off"}
execution: {lease: 1500ms, retry: {base: 50ms, cap: 500ms}}
chat: {wait: 5s}
log: {level: warn}
`, addr, ops, dbURL, strings.Join(keys, ", "), provider(a), provider(b), a.name, b.name, prompts)
	r := &replica{name: name, base: "http://" + addr,
		cfgPath: filepath.Join(dir, "router.yaml"), logPath: filepath.Join(dir, "router.log")}
	if err := os.WriteFile(r.cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.kill()
		if t.Failed() {
			t.Logf("replica %s log (tail):\n%s", r.name, r.logTail(60))
		}
	})
	return r
}

// migrate applies the migrations with the router's own command, so the audit
// trigger can be installed before any replica takes load.
func (r *replica) migrate(t *testing.T) {
	t.Helper()
	cmd := exec.Command(routerBin, "migrate", "--config", r.cfgPath)
	cmd.Env = r.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("router migrate: %v\n%s", err, out)
	}
}

func (r *replica) env() []string {
	env := append(os.Environ(), "DATABASE_URL=")
	for _, o := range owners {
		env = append(env, o.env+"="+o.key)
	}
	return env
}

// start runs the process and returns once GET /readyz answers 200.
func (r *replica) start(ctx context.Context) error {
	log, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(routerBin, "serve", "--config", r.cfgPath)
	cmd.Env = r.env()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start replica %s: %w", r.name, err)
	}
	done := make(chan struct{})
	r.mu.Lock()
	r.cmd, r.done, r.killing = cmd, done, false
	r.startups++
	r.mu.Unlock()
	go func() {
		werr := cmd.Wait()
		log.Close()
		r.mu.Lock()
		if !r.killing {
			r.exited = append(r.exited, fmt.Sprintf("replica %s exited by itself (%v); log tail:\n%s", r.name, werr, r.logTail(30)))
		}
		r.mu.Unlock()
		close(done)
	}()
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if resp, err := client.Get(r.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-done:
			return fmt.Errorf("replica %s exited during start-up; log tail:\n%s", r.name, r.logTail(30))
		case <-ctx.Done():
			return fmt.Errorf("replica %s not ready: %w", r.name, ctx.Err())
		case <-tick.C:
		}
	}
}

// kill sends SIGKILL and waits until the process is gone.
func (r *replica) kill() {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.killing = true
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// alive reports whether the current process is still running.
func (r *replica) alive() bool {
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

func (r *replica) unexpectedExits() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.exited...)
}

func (r *replica) logTail(n int) string {
	b, _ := os.ReadFile(r.logPath)
	lines := strings.Split(string(bytes.TrimRight(b, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
