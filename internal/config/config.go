// Package config owns the router's YAML configuration (SPEC §11): decoding it
// strictly, applying environment overrides for secrets and the database URL,
// filling defaults (WithDefaults) and checking it (Validate) with errors that name
// the field and say how to fix it.
//
// It must not open connections or build providers; it only describes them.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is the whole router configuration.
type Config struct {
	Listen string `yaml:"listen"`
	// OpsListen is the operator surface's address (SPEC §17); default
	// 127.0.0.1:9090. Off loopback, OpsKeyEnv is required.
	OpsListen string `yaml:"ops_listen"`
	// OpsKeyEnv names the environment variable holding the operator key.
	OpsKeyEnv string `yaml:"ops_key_env"`
	// Limits are every owner's defaults; api_keys entries override them.
	Limits Limits `yaml:"limits"`
	// Shutdown budgets on SIGTERM.
	Shutdown    Shutdown          `yaml:"shutdown"`
	DatabaseURL string            `yaml:"database_url"` // a PostgreSQL URL, or EmbeddedDatabase
	AutoMigrate *bool             `yaml:"auto_migrate"`
	Idempotency Idempotency       `yaml:"idempotency"`
	HTTP        HTTP              `yaml:"http"`
	APIKeys     []APIKey          `yaml:"api_keys"`
	Providers   []Provider        `yaml:"providers"`
	Routes      map[string]*Route `yaml:"routes"`
	PromptsDir  string            `yaml:"prompts_dir"` // default "prompts"; optional unless a prompt is served
	Conformance Conformance       `yaml:"conformance"`
	Log         Log               `yaml:"log"`
	Execution   Execution         `yaml:"execution"`
	Chat        Chat              `yaml:"chat"`
	Retention   Retention         `yaml:"retention"`
	Auth        Auth              `yaml:"auth"`
	Webhooks    Webhooks          `yaml:"webhooks"`

	// Dir is the directory of the config file; relative paths resolve from it.
	Dir string `yaml:"-"`
	// PromptsDirDefault is true when prompts_dir was not written: a missing
	// directory then means no prompts are served, not an error.
	PromptsDirDefault bool `yaml:"-"`
	// lines are the file's lines of the settings whose problems are found
	// on the decoded configuration (problems), for their messages.
	lines settingLines
}

// Idempotency settings (SPEC §5).
type Idempotency struct {
	// Retention: how long a key stays bound after its job is terminal. Default 24h.
	Retention Duration `yaml:"retention"`
}

// HTTP settings of the API.
type HTTP struct {
	MaxBodyBytes int64    `yaml:"max_body_bytes"` // default 1 MiB
	DefaultWait  Duration `yaml:"default_wait"`   // Prefer: wait when absent; default 0 (answer at once)
	MaxWait      Duration `yaml:"max_wait"`       // cap on Prefer: wait; default 60s
	// MaxHeaderBytes bounds a request's headers (request line, names and
	// values); default 64 KiB. Larger ones are answered 431.
	MaxHeaderBytes int64 `yaml:"max_header_bytes"`
	// ReadHeaderTimeout bounds reading a request's headers; default 10s.
	ReadHeaderTimeout Duration `yaml:"read_header_timeout"`
	// ReadBodyTimeout bounds reading a request's body, from the end of its
	// headers; default 30s. It ends when the body has been read, so it never
	// cuts a long-poll or a stream (there is no write timeout for that reason).
	ReadBodyTimeout Duration `yaml:"read_body_timeout"`
	// IdleTimeout closes a keep-alive connection idle this long; default 120s.
	IdleTimeout Duration `yaml:"idle_timeout"`
}

// APIKey maps a bearer key to an owner. The key comes from the environment
// variable KeyEnv; keys made by `router keys create` live in the database.
type APIKey struct {
	Owner  string `yaml:"owner"`
	KeyEnv string `yaml:"key_env"`
	// Webhook, when set, receives the owner's job completion events (SPEC §16).
	Webhook *Webhook `yaml:"webhook"`
	// Limits override the top-level limits for this owner, field by field.
	Limits *Limits `yaml:"limits"`
}

// Webhook is an owner's completion-event endpoint; the signing secret comes
// from the environment variable SecretEnv (a "whsec_" base64 secret, or any
// string used as given).
type Webhook struct {
	URL       string `yaml:"url"`
	SecretEnv string `yaml:"secret_env"`
	// PreviousSecretEnv names the variable holding the secret being rotated
	// out: while it is set, every delivery carries a signature with each
	// secret (Standard Webhooks allows several), so a receiver still
	// verifying with the old one accepts it.
	PreviousSecretEnv string `yaml:"previous_secret_env"`
}

// Retention of finished jobs (SPEC §16).
type Retention struct {
	// Jobs: how long after its idempotency key expired a job (with attempts,
	// events and deliveries) is deleted. Default 720h (30 days).
	Jobs Duration `yaml:"jobs"`
	// LeaderLease: how long the maintenance leader's lease lasts; another
	// replica takes over within it when the leader dies. Default 15s.
	LeaderLease Duration `yaml:"leader_lease"`
	// ConformanceRuns: how long after it finished a conformance run is
	// deleted, unless the gate or the operator views can still read it (its
	// group's latest run or latest pass, or a run that finished while the
	// latest ran: store.DeleteOldConformanceRunsFrom). Default 2160h (90
	// days); 0s keeps every run, otherwise at least
	// MinConformanceRetention. A pointer, as a written 0s is not the default.
	ConformanceRuns *Duration `yaml:"conformance_runs"`
}

// Auth settings.
type Auth struct {
	// CacheTTL: how long an API key lookup (hit or miss) is cached per
	// replica; a revoked key is refused on every replica within it. Default
	// 5s; 0s disables the cache.
	CacheTTL *Duration `yaml:"cache_ttl"`
}

// Webhooks settings of completion-event delivery.
type Webhooks struct {
	Timeout          Duration `yaml:"timeout"`            // one try; default 10s
	MaxResponseBytes int64    `yaml:"max_response_bytes"` // read of the answer; default 64 KiB
	RetryFor         Duration `yaml:"retry_for"`          // keep retrying this long; default (and minimum) 24h
	BackoffBase      Duration `yaml:"backoff_base"`       // first retry delay; default 5s
	BackoffCap       Duration `yaml:"backoff_cap"`        // longest retry delay; default 1h
	Workers          int      `yaml:"workers"`            // deliveries in flight per replica; default 100
	// MaxInflightPerOwner bounds one owner's deliveries in flight per
	// replica, 1 to Workers; default Workers/4, at least 1.
	MaxInflightPerOwner int `yaml:"max_inflight_per_owner"`
}

// RedeliveryWindow is how long an event may stay pending and still be
// delivered: retried until it is RetryFor old, the last failed try lasting up
// to DeliveryTryMax(Timeout), the retry up to BackoffCap later — plus, when a
// receiver's Retry-After set that wait, its spread (RetryAfterSpread) —, plus
// RedeliveryMargin for what a delivery that came due may still wait (a sum
// that saturates rather than overflows).
func (w Webhooks) RedeliveryWindow() time.Duration {
	d := time.Duration(0)
	for _, x := range []time.Duration{w.RetryFor.D(), w.BackoffCap.D(), RetryAfterSpread(w.BackoffCap.D()), DeliveryTryMax(w.Timeout.D()), RedeliveryMargin} {
		if d > math.MaxInt64-x {
			return math.MaxInt64
		}
		d += x
	}
	return d
}

// deliveryTryOverhead is what a delivery try's River job may run beyond
// webhooks.timeout before River asks for its retry: 10 s for the reads and
// the body's freeze around the send (internal/webhook Worker.Timeout), then
// 5 s for the record of the try's outcome (recordTimeout there).
const deliveryTryOverhead = 15 * time.Second

// DeliveryTryMax is the longest a failed webhook delivery try lasts, from its
// River job's start to River's retry of it, for webhooks.timeout timeout:
// the timeout plus deliveryTryOverhead (a sum that saturates). Both
// RedeliveryWindow and internal/webhook's last look at a waiting delivery
// count a failed try by it; counted as webhooks.timeout alone, 15 s of the
// minute a retry that came due at the latest may wait for its owner's turn
// went to the try itself (found by review). A test in internal/webhook keeps
// it equal to the worker's job timeout plus its record's.
func DeliveryTryMax(timeout time.Duration) time.Duration {
	if timeout > math.MaxInt64-deliveryTryOverhead {
		return math.MaxInt64
	}
	return timeout + deliveryTryOverhead
}

// RedeliveryMargin is how much longer than the latest its last retry can come
// due an event's delivery may still be looked at: internal/webhook snoozes a
// delivery whose owner is at webhooks.max_inflight_per_owner (or paused) for
// at most a minute past that, then abandons it unsent; a try its replica's
// death cut is rescued by River 5 minutes after it started (River's rescuer
// looks every 30 s, and the rescued delivery is due again within 5 s); and
// River fetches a due delivery within seconds. Without it retention, which
// keeps a job while one of its events is pending and younger than the window,
// deleted the job of a retry that came due in time but waited for its
// owner's turn, and the event was neither delivered nor abandoned (found by
// review). A test in internal/webhook keeps it equal to those parts.
const RedeliveryMargin = 7 * time.Minute

// retryAfterSpreadMax bounds RetryAfterSpread.
const retryAfterSpreadMax = 30 * time.Second

// RetryAfterSpread is the most a wait a receiver's Retry-After set (at most
// webhooks.backoff_cap) is lengthened by internal/webhook, so that the
// owner's retries do not all come back at once: an eighth of the wait, at
// most 30 s (webhook.spreadWait, which a test keeps equal).
func RetryAfterSpread(wait time.Duration) time.Duration {
	return max(0, min(wait/8, retryAfterSpreadMax))
}

// Limits are per-owner limits (SPEC §17). A field left out inherits (from the
// top level, or the built-in 0); 0 means unlimited.
type Limits struct {
	// MaxLiveJobs bounds the owner's pending, running and unknown jobs.
	MaxLiveJobs *int `yaml:"max_live_jobs"`
	// RequestsPerSecond bounds the owner's tenant API requests, per replica.
	RequestsPerSecond *float64 `yaml:"requests_per_second"`
	// Burst is the token bucket's size; default: RequestsPerSecond rounded up.
	Burst *int `yaml:"burst"`
}

// Over returns l with the fields o sets replaced.
func (l Limits) Over(o *Limits) Limits {
	if o == nil {
		return l
	}
	if o.MaxLiveJobs != nil {
		l.MaxLiveJobs = o.MaxLiveJobs
	}
	if o.RequestsPerSecond != nil {
		l.RequestsPerSecond = o.RequestsPerSecond
	}
	if o.Burst != nil {
		l.Burst = o.Burst
	}
	return l
}

// Shutdown budgets (SPEC §17): after SIGTERM, Drain is how long in-flight
// attempts may take to finish (default the longest provider timeout), HTTP how
// long open requests may take to be answered (default 10s).
type Shutdown struct {
	Drain Duration `yaml:"drain"`
	HTTP  Duration `yaml:"http"`
}

// Provider is one model endpoint.
type Provider struct {
	Name          string `yaml:"name"`
	Type          string `yaml:"type"` // openai | anthropic | scripted
	BaseURL       string `yaml:"base_url"`
	APIKeyEnv     string `yaml:"api_key_env"`
	Model         string `yaml:"model"`
	ContextWindow int    `yaml:"context_window"`
	Tokenizer     string `yaml:"tokenizer"`
	// The three deadlines of one attempt (SPEC §15): the whole attempt, the
	// first response byte, and the longest gap between stream chunks.
	Timeout           Duration `yaml:"timeout"`
	FirstByteTimeout  Duration `yaml:"first_byte_timeout"`
	StreamIdleTimeout Duration `yaml:"stream_idle_timeout"`
	// Stream calls the provider's streaming API; default true for openai.
	Stream         *bool   `yaml:"stream"`
	MaxRetries     *int    `yaml:"max_retries"`
	SupportsLookup bool    `yaml:"supports_lookup"` // send store+metadata so attempts can be looked up
	MaxIdleConns   int     `yaml:"max_idle_conns"`  // idle connections kept for reuse; 0: 256
	Breaker        Breaker `yaml:"breaker"`
	Script         []Step  `yaml:"script"` // scripted providers only
	// SendReasoningContent sends an assistant turn's reasoning_content (an
	// earlier answer's, in the caller's history) on: DeepSeek's thinking
	// mode and Moonshot's kimi-k2-thinking need it in a tool loop, while
	// other OpenAI-compatible APIs refuse the unknown member (Mistral's 400).
	// openai only; off, it is left out.
	SendReasoningContent bool `yaml:"send_reasoning_content"`

	// MaxResponseBytes bounds one attempt's answer (a body or a whole stream);
	// past it the attempt fails and the route fails over. Default 8 MiB.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	// MaxTokens is max_tokens for anthropic requests that set none (default 4096).
	MaxTokens int `yaml:"max_tokens"`
	// Price, USD per million tokens, prices this provider's attempts (SPEC §18);
	// a route target's own price overrides it.
	Price *Price `yaml:"price"`

	// firstByteRaised is a first_byte_timeout written below timeout with
	// stream: false, which WithDefaults raised to timeout (0: none was):
	// Warnings names it, so the value written is not silently replaced.
	firstByteRaised Duration
}

// Price is USD per million input and output tokens. No price is shipped as
// truth: configure your contract's. Both keys are required (0 is a price):
// one left out decoded as 0, so a price written half, or `price: {}`, made
// the attempts' cost_usd silently count nothing for it (priceKeyProblems).
type Price struct {
	InputPerMTok  float64 `yaml:"input_per_mtok"`
	OutputPerMTok float64 `yaml:"output_per_mtok"`
}

// pricesWritten is the part of the file that carries prices, each as written
// (a zero Node: left out).
type pricesWritten struct {
	Providers []struct {
		Name  string    `yaml:"name"`
		Price yaml.Node `yaml:"price"`
	} `yaml:"providers"`
	Routes map[string]*struct {
		Targets []struct {
			Price yaml.Node `yaml:"price"`
		} `yaml:"targets"`
	} `yaml:"routes"`
}

// priceKeyProblems reports every price of the document n that leaves out
// input_per_mtok or output_per_mtok: the Price it decodes to cannot tell a key
// left out from one written as 0. It runs before wrongTypes drops the values
// of the wrong type, so a key written wrong is named once, by wrongTypes, not
// as missing too. yaml.v3 resolves anchors and merge keys; a part of the
// file that does not decode is left to the decode that reports it.
func priceKeyProblems(n *yaml.Node) []string {
	var w pricesWritten
	_ = n.Decode(&w)
	var out []string
	for i, p := range w.Providers {
		out = append(out, missingPriceKeys(fmt.Sprintf("providers[%d] (%s)", i, p.Name), &p.Price)...)
	}
	for _, name := range slices.Sorted(maps.Keys(w.Routes)) {
		if r := w.Routes[name]; r != nil {
			for i, t := range r.Targets {
				out = append(out, missingPriceKeys(fmt.Sprintf("routes.%s.targets[%d]", name, i), &t.Price)...)
			}
		}
	}
	return out
}

// missingPriceKeys names the keys the price mapping n leaves out. A price
// left out, written empty (null) or not a mapping (wrongTypes' to report)
// has none.
func missingPriceKeys(where string, n *yaml.Node) []string {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	var keys struct {
		In  *yaml.Node `yaml:"input_per_mtok"`
		Out *yaml.Node `yaml:"output_per_mtok"`
	}
	_ = n.Decode(&keys)
	var missing []string
	if keys.In == nil {
		missing = append(missing, "input_per_mtok")
	}
	if keys.Out == nil {
		missing = append(missing, "output_per_mtok")
	}
	if len(missing) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("line %d: %s.price: %s left out; a price needs both input_per_mtok and output_per_mtok (USD per million tokens; "+
		"write 0 for tokens that cost nothing), or leave price out for an unpriced target", n.Line, where, strings.Join(missing, " and "))}
}

// Breaker settings (SPEC §10).
type Breaker struct {
	ConsecutiveFailures int      `yaml:"consecutive_failures"`
	OpenFor             Duration `yaml:"open_for"`
	HalfOpenProbes      int      `yaml:"half_open_probes"`
}

// Step is one scripted behaviour; a scripted provider plays its steps in order
// and repeats the last.
type Step struct {
	Latency Duration `yaml:"latency"`
	Output  string   `yaml:"output"`
	Status  int      `yaml:"status"`
	Hang    bool     `yaml:"hang"`
	Model   string   `yaml:"model"`
}

// Target is one {provider, model} of a route (SPEC §15). An empty Model is the
// provider's own model.
type Target struct {
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
	// Price overrides the provider's price for this target (SPEC §18).
	Price *Price `yaml:"price"`
	// ContextWindow is the target's model's window in tokens; default the
	// provider's context_window.
	ContextWindow *int `yaml:"context_window"`
	// Tokenizer is the encoding the target's model counts with; default the
	// provider's tokenizer for the provider's own model, else chosen by the
	// target's model name.
	Tokenizer string `yaml:"tokenizer"`
}

// HedgeBudget bounds a route's hedges in flight, in the manner of Envoy's retry
// budget: at most max(MinConcurrent, Percent% of the route's jobs in flight).
type HedgeBudget struct {
	Percent       *float64 `yaml:"percent"`        // default 10
	MinConcurrent *int     `yaml:"min_concurrent"` // default 3
}

// Route is the ordered targets for an operation, with its race policy.
type Route struct {
	// Targets are the route's {provider, model} pairs, primary first.
	Targets []Target `yaml:"targets"`
	// Providers is shorthand for targets with the providers' own models.
	Providers []string `yaml:"providers"`
	// bothGiven records that targets and providers were both written.
	bothGiven   bool
	HedgeAfter  string      `yaml:"hedge_after"` // a duration, "adaptive" (default with 2+ targets) or "off"
	HedgeMin    Duration    `yaml:"hedge_min"`   // adaptive bounds; default 2s
	HedgeMax    Duration    `yaml:"hedge_max"`   // default 10s, at most ¾ of Deadline (also the delay without history)
	HedgeBudget HedgeBudget `yaml:"hedge_budget"`
	MaxInflight int         `yaml:"max_inflight"`
	MaxAttempts int         `yaml:"max_attempts"`
	Deadline    Duration    `yaml:"deadline"` // the whole job; default 2m
	// FailoverOnContentPolicy fails over on a content-policy rejection instead
	// of reporting it to the caller (default false).
	FailoverOnContentPolicy bool `yaml:"failover_on_content_policy"`
	// KeepLosers lets in-flight attempts run after another won, to observe them.
	KeepLosers bool `yaml:"keep_losers"`
	// ConformancePrompt names the prompt whose conformance results gate this
	// route's fallbacks for raw chat completions; empty: no gate for them.
	ConformancePrompt string `yaml:"conformance_prompt"`
	// Models are model names a chat completion may ask for: the request goes to
	// this route and the name is passed through to its providers.
	Models []string `yaml:"models"`

	// hedgeDefault records that hedge_after was not written.
	hedgeDefault bool
	// hedgeMaxDefault records that hedge_max was not written (or written
	// 0, which the checks see as 0).
	hedgeMaxDefault bool
	// hedgeMinDefault records that hedge_min was not written (or written
	// 0, which the checks see as 0).
	hedgeMinDefault bool
	// hedgeBudgetDefault records that hedge_budget wrote neither percent
	// nor min_concurrent.
	hedgeBudgetDefault bool
}

// HedgeDelay parses HedgeAfter: the fixed delay (0 = no hedging) and whether
// hedging is adaptive.
func (r *Route) HedgeDelay() (time.Duration, bool) {
	switch r.HedgeAfter {
	case "adaptive":
		return 0, true
	case "off", "":
		return 0, false
	}
	d, _ := time.ParseDuration(r.HedgeAfter)
	return d, false
}

// Chat settings of the OpenAI-compatible endpoint (SPEC §4.3).
type Chat struct {
	// RequireIdempotencyKey rejects calls without Idempotency-Key (default:
	// each such call is its own intent).
	RequireIdempotencyKey bool `yaml:"require_idempotency_key"`
	// Wait is how long a call waits for its job before answering 504 (default 5m).
	Wait Duration `yaml:"wait"`
	// KeepAlive is what a streaming call is sent while it waits: comment
	// (an SSE comment line, the default) or blank (a bare blank line).
	KeepAlive string `yaml:"keepalive"`
}

// Conformance gate settings (SPEC §9).
type Conformance struct {
	MaxAge Duration `yaml:"max_age"`
	Gate   string   `yaml:"gate"` // fallbacks | all | off
}

// Log settings.
type Log struct {
	Format string `yaml:"format"` // json | text
	Level  string `yaml:"level"`  // debug | info | warn | error
}

// Execution settings of this router process.
type Execution struct {
	// Lease: how long an attempt's lease lasts before another replica may
	// declare it unknown; renewed at a third of it. Default 30s.
	Lease Duration `yaml:"lease"`
	// ReconcileAfter: how long an attempt stays unknown before providers with
	// a lookup capability are asked about it. Default 2m.
	ReconcileAfter Duration `yaml:"reconcile_after"`
	// HandoverWait: how long a job whose route or prompt version this
	// replica lacks (a rolling update) is left to a replica that has it,
	// from the start of the job's current run, before this replica fails it.
	// Default 2m.
	HandoverWait Duration `yaml:"handover_wait"`
	// Retry is the backoff of retries on the same provider.
	Retry Retry `yaml:"retry"`
}

// Retry is capped exponential backoff with full jitter, never sooner than the
// provider's Retry-After; a Retry-After longer than MaxRetryAfter fails over.
type Retry struct {
	Base          Duration `yaml:"base"`            // default 200ms
	Cap           Duration `yaml:"cap"`             // default 5s
	MaxRetryAfter Duration `yaml:"max_retry_after"` // default 30s
}

// Load reads, decodes, overrides from the environment, fills defaults and
// validates the file at path.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w (%s)", err, configPathHint(path))
	}
	c, err := parse(b, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Dir = dirOf(path)
	return c, nil
}

// DefaultPath is the configuration file the commands read when --config is
// not given.
const DefaultPath = "router.yaml"

// configPathHint is what to do about a configuration file that cannot be
// read: the default one (--config not given, most likely) wants --config;
// a path given with --config wants checking.
func configPathHint(path string) string {
	if path == DefaultPath {
		return "pass --config PATH, e.g. --config demo/router.yaml for the demo"
	}
	return "check the path given to --config; the demo's is demo/router.yaml"
}

// Parse decodes YAML, applies environment overrides, defaults and validation.
// Every problem is reported in one error: unknown fields (which yaml's strict
// mode would stop at), values of the wrong type, and invalid settings.
func Parse(b []byte) (*Config, error) { return parse(b, "the configuration file") }

// parse is Parse of the file named file (for messages).
func parse(b []byte, file string) (*Config, error) {
	var c Config
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&root); err != nil && !errors.Is(err, errEOF) {
		return nil, fmt.Errorf("decode: %w%s", err, tabHint(b, err))
	}
	var problems []string
	var zeros []reflect.Value
	if len(root.Content) > 0 {
		problems = dropDuplicateKeys(root.Content[0])
		problems = append(problems, unknownFields(root.Content[0], reflect.TypeOf(c), "")...)
		problems = append(problems, priceKeyProblems(root.Content[0])...) // before wrongTypes drops values
		if p := blankPromptsDir(root.Content[0]); p != "" {
			problems = append(problems, p)
		}
		// database_url written blank is refused unless DATABASE_URL, set to
		// something, replaces it (a DATABASE_URL of white space is refused below).
		if v := os.Getenv("DATABASE_URL"); strings.TrimSpace(v) == "" {
			if p := blankDatabaseURL(root.Content[0]); p != "" {
				problems = append(problems, p)
			}
		}
		// Each value of the wrong type is reported here, naming its setting,
		// and removed: the decode and writtenZeros see it as left out.
		wrong := wrongTypes(root.Content[0], reflect.TypeOf(c))
		problems = append(problems, wrong...)
		if len(wrong) > 0 && root.Content[0].Kind != yaml.MappingNode {
			return nil, errors.New("invalid configuration:\n  " + strings.Join(problems, "\n  "))
		}
		if err := root.Content[0].Decode(&c); err != nil {
			var te *yaml.TypeError
			if !errors.As(err, &te) {
				return nil, fmt.Errorf("decode: %w", err)
			}
			problems = append(problems, te.Errors...) // what wrongTypes does not know
		}
		zeros = writtenZeros(root.Content[0], &c)
	}
	if p := extraDocument(dec); p != "" {
		problems = append(problems, p)
	}
	if v, set := os.LookupEnv("DATABASE_URL"); set && v != "" {
		if strings.TrimSpace(v) == "" {
			// Read as unset, it would put serve on the embedded development
			// database, apart from the other replicas.
			problems = append(problems, "DATABASE_URL is set but empty or only white space: unset it to use database_url from "+file+", or set it to the PostgreSQL URL")
		} else {
			c.DatabaseURL = v
		}
	}
	c.DatabaseURL = normalDatabaseURL(c.DatabaseURL)
	c = c.WithDefaults()
	if len(root.Content) > 0 {
		c.lines = writtenLines(root.Content[0])
	}
	// A setting written as 0 is judged as written, not as its default.
	withZeros(zeros, func() { problems = append(problems, c.problems()...) })
	if len(problems) > 0 {
		return nil, errors.New("invalid configuration:\n  " + strings.Join(problems, "\n  "))
	}
	return &c, nil
}

// extraDocument reports a second YAML document (after a `---` line): the
// router reads one, so settings written after it would be silently ignored.
// An empty trailing document (a lone `---` at the end) carries nothing and is
// allowed.
func extraDocument(dec *yaml.Decoder) string {
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		switch {
		case errors.Is(err, errEOF):
			return ""
		case err != nil:
			return fmt.Sprintf("a further YAML document follows a --- line and cannot be read (%v): the configuration is one document; remove the --- line and merge the settings into the first document", err)
		}
		if len(next.Content) == 0 || next.Content[0].Kind == yaml.ScalarNode && next.Content[0].Value == "" {
			continue // an empty document (--- with nothing after it) says nothing
		}
		return fmt.Sprintf("line %d: another YAML document starts here (after a --- line); the configuration is one document and the router would ignore this one: remove the --- line and merge its settings into the first document", next.Content[0].Line)
	}
}

// dirOf is the directory of the config file at path, which relative paths
// in it resolve from: "/" for a file in the root directory (where cutting at
// the last "/" gave "", and the paths resolved from the working directory),
// "." for a bare file name.
func dirOf(path string) string { return filepath.Dir(path) }

// Duration is a time.Duration written as "10s", "24h".
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		// A TypeError lets the decoder go on and report the file's other problems.
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q %s", n.Line, n.Value, durationProblem(n.Value))}}
	}
	*d = Duration(v)
	return nil
}

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// EmbeddedDatabase, as database_url, asks for the embedded local PostgreSQL
// (.local/pg, started and stopped by the command): a development database,
// chosen explicitly — without a database_url the router refuses to start.
const EmbeddedDatabase = "embedded"
