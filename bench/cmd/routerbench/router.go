package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ProviderSpec is one provider of a generated router configuration; every
// provider is the loopback mock, told apart by its model.
type ProviderSpec struct {
	Name, Model    string
	Timeout        time.Duration
	MaxRetries     int
	SupportsLookup bool
}

// RouteSpec is the route "default" of a generated configuration.
type RouteSpec struct {
	Providers  []string
	HedgeAfter string // "", a duration, or "adaptive"
	HedgeMin   time.Duration
	Extra      string // more YAML lines, indented by four spaces
}

// RouterSpec is one router process.
type RouterSpec struct {
	Name      string // used for the log file, the config file and (unless Owner is set) the owner
	Owner     string // the API key's owner; replicas of one deployment share it
	Providers []ProviderSpec
	Route     RouteSpec
	Lease     time.Duration
	LogLevel  string
	Webhook   string // when set, the owner's webhook URL (its completion events are delivered there)
}

// RouterProc is a running router.
type RouterProc struct {
	Base  string
	Ops   string // the operator listener's base URL (/metrics)
	Owner string
	Key   string
	cmd   *exec.Cmd
	done  chan struct{}
	log   string
	Debug string // the --debug-listen base URL ("" when not asked for)
}

// Harness holds what every scenario shares.
type Harness struct {
	Bin      string // the router binary, built from ./cmd/router
	Work     string // temporary directory: configs, logs
	Prompts  string
	DB       string
	Mock     *Mock
	LogLevel string // the routers' log level unless a spec sets one
}

func (s RouterSpec) owner() string {
	if s.Owner != "" {
		return s.Owner
	}
	return s.Name
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func (h *Harness) writeConfig(s RouterSpec, addr, opsAddr string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: %s\nops_listen: %s\n", addr, opsAddr)
	if s.Webhook != "" {
		fmt.Fprintf(&b, "api_keys: [{owner: %s, key_env: BENCH_API_KEY, webhook: {url: %q, secret_env: BENCH_WEBHOOK_SECRET}}]\n", s.owner(), s.Webhook)
	} else {
		fmt.Fprintf(&b, "api_keys: [{owner: %s, key_env: BENCH_API_KEY}]\n", s.owner())
	}
	b.WriteString("http: {max_wait: 60s}\nproviders:\n")
	for _, p := range s.Providers {
		fmt.Fprintf(&b, "  - {name: %s, type: openai, base_url: %q, model: %s, timeout: %s, max_retries: %d, supports_lookup: %t}\n",
			p.Name, h.Mock.URL(), p.Model, p.Timeout, p.MaxRetries, p.SupportsLookup)
	}
	b.WriteString("routes:\n  default:\n")
	fmt.Fprintf(&b, "    providers: [%s]\n", strings.Join(s.Route.Providers, ", "))
	if s.Route.HedgeAfter != "" {
		fmt.Fprintf(&b, "    hedge_after: %s\n", s.Route.HedgeAfter)
	}
	if s.Route.HedgeMin > 0 {
		fmt.Fprintf(&b, "    hedge_min: %s\n", s.Route.HedgeMin)
	}
	b.WriteString("    max_inflight: 2\n    max_attempts: 4\n")
	b.WriteString(s.Route.Extra)
	fmt.Fprintf(&b, "prompts_dir: %q\n", h.Prompts)
	b.WriteString("conformance: {gate: off}\n")
	lease := s.Lease
	if lease <= 0 {
		lease = 30 * time.Second
	}
	level := s.LogLevel
	if level == "" {
		level = h.LogLevel
	}
	if level == "" {
		level = "info"
	}
	fmt.Fprintf(&b, "execution: {lease: %s}\nlog: {level: %s}\n", lease, level)
	path := filepath.Join(h.Work, s.Name+".yaml")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// Start runs the router binary for spec (with --debug-listen on a free
// loopback port when debug) and waits until /readyz answers 200.
func (h *Harness) Start(ctx context.Context, s RouterSpec, debug bool) (*RouterProc, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	opsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cfg, err := h.writeConfig(s, addr, opsAddr)
	if err != nil {
		return nil, err
	}
	p := &RouterProc{Base: "http://" + addr, Ops: "http://" + opsAddr, Owner: s.owner(), Key: "bench-key-" + s.owner(), done: make(chan struct{}),
		log: filepath.Join(h.Work, s.Name+".log")}
	logf, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	args := []string{"serve", "--config", cfg}
	if debug {
		dbg, err := freeAddr()
		if err != nil {
			return nil, err
		}
		p.Debug = "http://" + dbg
		args = append(args, "--debug-listen", dbg)
	}
	p.cmd = exec.Command(h.Bin, args...)
	p.cmd.Env = append(os.Environ(), "BENCH_API_KEY="+p.Key, "DATABASE_URL="+h.DB,
		"BENCH_WEBHOOK_SECRET=whsec_"+base64.StdEncoding.EncodeToString([]byte("routerbench webhook secret")))
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(p.Base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("router %s exited during start-up; see %s", s.Name, p.log)
		case <-ctx.Done():
			p.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("router %s not ready within 60s; see %s", s.Name, p.log)
		}
	}
}

// Stop asks the router to shut down (SIGTERM), then kills it after 10 s.
func (p *RouterProc) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
