package config

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

var errEOF = io.EOF

// WithDefaults returns c with every unset field at its documented default.
func (c Config) WithDefaults() Config {
	def(&c.Listen, "127.0.0.1:8080")
	def(&c.OpsListen, "127.0.0.1:9090")
	def(&c.Shutdown.HTTP, Duration(10*time.Second))
	if c.AutoMigrate == nil {
		t := true
		c.AutoMigrate = &t
	}
	def(&c.Idempotency.Retention, Duration(24*time.Hour))
	def(&c.HTTP.MaxBodyBytes, 1<<20)
	def(&c.HTTP.MaxHeaderBytes, DefaultMaxHeaderBytes)
	def(&c.HTTP.MaxWait, Duration(60*time.Second))
	def(&c.HTTP.ReadHeaderTimeout, Duration(10*time.Second))
	def(&c.HTTP.ReadBodyTimeout, Duration(30*time.Second))
	def(&c.HTTP.IdleTimeout, Duration(120*time.Second))
	if c.PromptsDir == "" {
		c.PromptsDir, c.PromptsDirDefault = "prompts", true
	}
	def(&c.Conformance.MaxAge, Duration(168*time.Hour))
	def(&c.Conformance.Gate, "fallbacks")
	def(&c.Log.Format, "text")
	def(&c.Log.Level, "info")
	def(&c.Execution.Lease, Duration(30*time.Second))
	def(&c.Execution.Retry.Cap, Duration(5*time.Second))
	// Left out, the base is at most a cap written below it (cap: 100ms
	// alone was refused for the base the file never wrote).
	def(&c.Execution.Retry.Base, min(Duration(200*time.Millisecond), positiveOr(c.Execution.Retry.Cap, Duration(200*time.Millisecond))))
	def(&c.Execution.Retry.MaxRetryAfter, Duration(30*time.Second))
	def(&c.Execution.HandoverWait, max(Duration(2*time.Minute), twice(c.Execution.Lease)))
	def(&c.Chat.Wait, Duration(5*time.Minute))
	def(&c.Chat.KeepAlive, KeepAliveComment)
	def(&c.Retention.Jobs, Duration(720*time.Hour))
	def(&c.Retention.LeaderLease, Duration(15*time.Second))
	if c.Retention.ConformanceRuns == nil {
		keep := Duration(DefaultConformanceRetention)
		c.Retention.ConformanceRuns = &keep
	}
	if c.Auth.CacheTTL == nil {
		ttl := Duration(5 * time.Second)
		c.Auth.CacheTTL = &ttl
	}
	def(&c.Webhooks.Timeout, Duration(10*time.Second))
	def(&c.Webhooks.MaxResponseBytes, 64<<10)
	def(&c.Webhooks.RetryFor, Duration(24*time.Hour))
	def(&c.Webhooks.BackoffBase, Duration(5*time.Second))
	def(&c.Webhooks.BackoffCap, Duration(time.Hour))
	def(&c.Webhooks.Workers, 100) // webhook.DefaultWorkers: why 100, there
	def(&c.Webhooks.MaxInflightPerOwner, max(1, c.Webhooks.Workers/4))
	for i := range c.Providers {
		p := &c.Providers[i]
		if p.Timeout == 0 {
			p.Timeout = Duration(60 * time.Second)
		}
		if p.Stream == nil {
			on := p.Type == "openai" || p.Type == "anthropic"
			p.Stream = &on
		}
		// Unset deadlines follow the attempt's timeout so they stay below it.
		switch {
		case p.unstreamed() && (p.FirstByteTimeout == 0 || (p.FirstByteTimeout > 0 && p.FirstByteTimeout < p.Timeout)):
			// Not streamed, the answer's first byte comes only once it is
			// generated whole: the adapters bound that wait by timeout
			// alone, and routing (hedges, the drain, the breaker) counts
			// timeout as the attempt's first-byte budget. A shorter
			// first_byte_timeout written for it would bound nothing
			// (unstreamedFirstByteWarnings says so).
			if p.FirstByteTimeout > 0 {
				p.firstByteRaised = p.FirstByteTimeout
			}
			p.FirstByteTimeout = p.Timeout
		case p.FirstByteTimeout == 0:
			p.FirstByteTimeout = min(Duration(30*time.Second), p.Timeout/2)
		}
		if p.StreamIdleTimeout == 0 {
			p.StreamIdleTimeout = min(Duration(15*time.Second), p.Timeout/2)
		}
		if p.MaxRetries == nil {
			one := 1
			p.MaxRetries = &one
		}
		if p.Breaker.ConsecutiveFailures == 0 {
			p.Breaker.ConsecutiveFailures = 5
		}
		if p.Breaker.OpenFor == 0 {
			p.Breaker.OpenFor = Duration(30 * time.Second)
		}
		if p.Breaker.HalfOpenProbes == 0 {
			p.Breaker.HalfOpenProbes = 1
		}
		if p.ContextWindow == 0 {
			p.ContextWindow = 128000
		}
		if p.MaxResponseBytes == 0 {
			p.MaxResponseBytes = 8 << 20
		}
		// The adapters apply these two defaults as well; they are filled here
		// so that the configuration shows what runs (docs/configuration.md).
		if p.MaxIdleConns == 0 {
			p.MaxIdleConns = 256
		}
		if p.MaxTokens == 0 && p.Type == "anthropic" {
			p.MaxTokens = 4096
		}
	}
	// An unknown attempt's provider is asked about it only once it has had
	// as long as the attempt's timeout to finish: its "no record" is
	// trusted, and the job tried again, after reconcile_after.
	if c.Execution.ReconcileAfter == 0 {
		c.Execution.ReconcileAfter = Duration(2 * time.Minute)
		for _, p := range c.Providers {
			if p.SupportsLookup {
				c.Execution.ReconcileAfter = max(c.Execution.ReconcileAfter, p.Timeout)
			}
		}
	}
	if c.Shutdown.Drain == 0 {
		for _, p := range c.Providers {
			c.Shutdown.Drain = max(c.Shutdown.Drain, p.Timeout)
		}
		if c.Shutdown.Drain == 0 {
			c.Shutdown.Drain = Duration(60 * time.Second)
		}
	}
	for _, r := range c.Routes {
		if r == nil {
			continue
		}
		r.bothGiven = r.bothGiven || len(r.Targets) > 0 && len(r.Providers) > 0
		if len(r.Targets) == 0 {
			for _, name := range r.Providers {
				r.Targets = append(r.Targets, Target{Provider: name})
			}
		}
		if r.HedgeAfter == "" {
			r.hedgeDefault = true
			r.HedgeAfter = "off"
			if len(r.Targets) >= 2 {
				r.HedgeAfter = "adaptive"
			}
		}
		if r.MaxInflight == 0 {
			r.MaxInflight = 2
		}
		if r.MaxAttempts == 0 {
			r.MaxAttempts = 4
		}
		if r.Deadline == 0 {
			r.Deadline = Duration(2 * time.Minute)
		}
		// Before a target has history the adaptive delay is hedge_max: under
		// a short deadline it is ¾ of the deadline, so that the hedge can
		// start before the job is stopped. Left out, hedge_min is at most
		// hedge_max, the written one too (hedge_max: 1s alone was refused for
		// the 2s hedge_min the file never wrote).
		hedgeMax := Duration(10 * time.Second)
		if r.Deadline > 0 {
			hedgeMax = min(hedgeMax, max(r.Deadline-r.Deadline/4, 1)) // ¾, never d*3/4: it overflows past ~97 years
		}
		if r.HedgeMax == 0 {
			r.HedgeMax, r.hedgeMaxDefault = hedgeMax, true
		}
		if r.HedgeMin == 0 {
			r.HedgeMin, r.hedgeMinDefault = min(Duration(2*time.Second), hedgeMax, positiveOr(r.HedgeMax, hedgeMax)), true
		}
		if r.HedgeBudget.Percent == nil && r.HedgeBudget.MinConcurrent == nil {
			r.hedgeBudgetDefault = true
		}
		if r.HedgeBudget.Percent == nil {
			ten := 10.0
			r.HedgeBudget.Percent = &ten
		}
		if r.HedgeBudget.MinConcurrent == nil {
			three := 3
			r.HedgeBudget.MinConcurrent = &three
		}
	}
	return c
}

// Validate reports every problem at once, each naming its field.
func (c Config) Validate() error {
	if errs := c.problems(); len(errs) > 0 {
		return errors.New("invalid configuration:\n  " + strings.Join(errs, "\n  "))
	}
	return nil
}

// MaxProviderRetries bounds providers[].max_retries: each retry is a paid
// call.
const MaxProviderRetries = 100

// problems is every problem of a configuration with defaults filled.
func (c Config) problems() []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if c.Execution.Retry.Cap > 0 && c.Execution.Retry.Base > c.Execution.Retry.Cap {
		add("execution.retry.base (%s) is larger than execution.retry.cap (%s)", c.Execution.Retry.Base.D(), c.Execution.Retry.Cap.D())
	}
	if c.Execution.HandoverWait > 0 && c.Execution.Lease > 0 && c.Execution.Lease <= Duration(MaxLease) && c.Execution.HandoverWait < twice(c.Execution.Lease) {
		add("execution.handover_wait (%s) is shorter than twice execution.lease (%s): replicas that are not the recovery leader adopt a job only after it has waited a lease, and the leader would fail jobs they could run; set it to %s or more",
			c.Execution.HandoverWait.D(), c.Execution.Lease.D(), twice(c.Execution.Lease).D())
	}
	if why := databaseURLProblem(c.DatabaseURL); why != "" {
		add("%s", why)
	}
	if c.HTTP.MaxWait > 0 && c.HTTP.DefaultWait > c.HTTP.MaxWait {
		add("http.default_wait (%s) is larger than http.max_wait (%s)", c.HTTP.DefaultWait.D(), c.HTTP.MaxWait.D())
	}
	switch c.Conformance.Gate {
	case "fallbacks", "all", "off":
	default:
		add("conformance.gate: %q is not one of fallbacks, all, off", c.Conformance.Gate)
	}
	if _, err := c.Log.JSON(); err != nil {
		add("%v", err)
	}
	if _, err := c.Chat.BlankKeepAlive(); err != nil {
		add("%v", err)
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		add("%slisten: %q is not host:port (for example 127.0.0.1:8080): %v", c.lines.at(c.lines.listen), c.Listen, err)
	} else if msg := portProblem(c.Listen); msg != "" {
		add("%slisten: %s", c.lines.at(c.lines.listen), msg)
	} else if sameListener(c.Listen, c.OpsListen) {
		add("listen (%s) and ops_listen (%s) are the same port: the tenant API and the operator surface need a listener each", c.Listen, c.OpsListen)
	}
	if _, _, err := net.SplitHostPort(c.OpsListen); err != nil {
		add("%sops_listen: %q is not host:port (for example 127.0.0.1:9090): %v", c.lines.at(c.lines.opsListen), c.OpsListen, err)
	} else if msg := portProblem(c.OpsListen); msg != "" {
		add("%sops_listen: %s", c.lines.at(c.lines.opsListen), msg)
	} else if !IsLoopback(c.OpsListen) && c.OpsKeyEnv == "" {
		add("ops_listen: %s is not a loopback address, so the operator surface (dashboard, metrics, providers, conformance) needs a key: set ops_key_env to the name of an environment variable holding it, or bind ops_listen to 127.0.0.1", c.OpsListen)
	}
	checkLimits := func(where string, l *Limits) {
		if l == nil {
			return
		}
		if l.MaxLiveJobs != nil && *l.MaxLiveJobs < 0 {
			add("%s.max_live_jobs must be 0 (unlimited) or more", where)
		}
		if l.RequestsPerSecond != nil && !finiteNonNegative(*l.RequestsPerSecond) {
			add("%s.requests_per_second must be 0 (unlimited) or more, and finite", where)
		}
		if l.Burst != nil && *l.Burst < 0 {
			add("%s.burst must be 0 (the rate rounded up) or more", where)
		}
	}
	checkLimits("limits", &c.Limits)
	owners := map[string]Limits{}
	hooks := map[string]int{} // owner -> the first entry with a webhook
	for i, k := range c.APIKeys {
		if k.Owner == "" || k.KeyEnv == "" {
			add("api_keys[%d]: owner and key_env are both required", i)
		} else if err := ValidateOwner(k.Owner); err != nil {
			add("api_keys[%d].owner: %v", i, err)
		}
		if k.Webhook != nil {
			if err := ValidateWebhookURL(k.Webhook.URL); err != nil {
				// The owner names the webhook: the refusal shows its URL shortened.
				if k.Owner != "" {
					add("api_keys[%d].webhook.url (owner %s): %v", i, k.Owner, err)
				} else {
					add("api_keys[%d].webhook.url: %v", i, err)
				}
			}
			if k.Webhook.SecretEnv == "" {
				add("api_keys[%d].webhook.secret_env is required: the environment variable holding the signing secret", i)
			}
			if k.Webhook.PreviousSecretEnv != "" && k.Webhook.PreviousSecretEnv == k.Webhook.SecretEnv {
				add("api_keys[%d].webhook.previous_secret_env names the same variable as secret_env (%s): during a rotation it names the variable holding the old secret, and secret_env the new one; without a rotation leave it out", i, k.Webhook.SecretEnv)
			}
			// One webhook per owner: with two, the last entry would silently win.
			if j, ok := hooks[k.Owner]; ok && *c.APIKeys[j].Webhook != *k.Webhook {
				add("api_keys[%d].webhook: owner %s has another webhook in api_keys[%d]; an owner's events go to one webhook, so give its entries the same one (or set it on one entry)", i, k.Owner, j)
			} else if !ok {
				hooks[k.Owner] = i
			}
		}
		checkLimits(fmt.Sprintf("api_keys[%d].limits", i), k.Limits)
		eff := c.Limits.Over(k.Limits)
		if prev, ok := owners[k.Owner]; ok && !prev.equal(eff) {
			add("api_keys[%d].limits: owner %s has another key with different limits; limits are per owner, so give every key of an owner the same limits", i, k.Owner)
		}
		owners[k.Owner] = eff
	}
	errs = append(errs, c.burstProblems()...)
	if c.Webhooks.RetryFor < Duration(24*time.Hour) {
		add("webhooks.retry_for (%s) is shorter than 24h: deliveries are retried for at least a day (SPEC §16)", c.Webhooks.RetryFor.D())
	}
	if c.Webhooks.BackoffCap > 0 && c.Webhooks.BackoffBase > c.Webhooks.BackoffCap {
		add("webhooks.backoff_base (%s) is larger than webhooks.backoff_cap (%s)", c.Webhooks.BackoffBase.D(), c.Webhooks.BackoffCap.D())
	}
	if c.Auth.CacheTTL != nil && *c.Auth.CacheTTL < 0 {
		add("auth.cache_ttl must not be negative (0s disables the cache)")
	}
	names := map[string]int{}
	for i, p := range c.Providers {
		where := fmt.Sprintf("providers[%d] (%s)", i, p.Name)
		if p.Name == "" {
			add("providers[%d].name is required", i)
		}
		if strings.Contains(p.Name, "/") {
			add("%s.name: a provider name cannot contain \"/\" (it separates provider and model in target ids)", where)
		}
		if why := nameProblem(p.Name); why != "" {
			add("providers[%d].name %q: a provider name %s: rename it, e.g. %q", i, p.Name, why, saneName(p.Name))
		}
		if why := modelNameProblem(p.Model); why != "" {
			add("%s.model %q: %s", where, p.Model, why)
		}
		if first, used := names[p.Name]; used {
			add("providers[%d]: the name %q is used twice, by providers[%d] and providers[%d]: rename one of them", i, p.Name, first, i)
		} else {
			names[p.Name] = i
		}
		switch p.Type {
		case "openai":
			if p.BaseURL == "" {
				add("%s.base_url is required for type openai (for example https://api.openai.com/v1)", where)
			}
			if len(p.Script) > 0 {
				add("%s.script is only for type scripted", where)
			}
			if p.APIKeyEnv == "" && hostIs(p.BaseURL, "api.openai.com", false) {
				add("%s.api_key_env is required for api.openai.com, which refuses a request without a key (every attempt would fail as auth and open the breaker): set it to the name of the environment variable holding the key", where)
			}
		case "anthropic":
			if len(p.Script) > 0 {
				add("%s.script is only for type scripted", where)
			}
			if p.APIKeyEnv == "" && hostIs(p.BaseURL, "api.anthropic.com", true) {
				add("%s.api_key_env is required for api.anthropic.com, which refuses a request without a key (every attempt would fail as auth and open the breaker): set it to the name of the environment variable holding the key", where)
			}
		case "scripted":
		default:
			add("%s.type: %q is not openai, anthropic or scripted", where, p.Type)
		}
		if p.SupportsLookup && p.Type != "openai" && p.Type != "" {
			add("%s.supports_lookup: only type openai can look a request up, and this provider is type %s, so its unknown attempts would never be reconciled by lookup; remove supports_lookup", where, p.Type)
		}
		if p.SendReasoningContent && p.Type != "openai" && p.Type != "" {
			add("%s.send_reasoning_content: only type openai sends an assistant turn's reasoning_content, and this provider is type %s, whose adapter never sends it, so the setting would do nothing; remove send_reasoning_content", where, p.Type)
		}
		if p.SupportsLookup && c.Execution.ReconcileAfter > 0 && p.Timeout > c.Execution.ReconcileAfter {
			add("execution.reconcile_after (%s) is shorter than %s.timeout (%s): an attempt cut before its first byte may still be running at the provider, so its lookup's \"no record\" would be trusted too early and the job tried again while the first answer is still coming; set reconcile_after to %s or more, or leave it out (it defaults to the longest timeout of a provider with supports_lookup, at least 2m)",
				c.Execution.ReconcileAfter.D(), where, p.Timeout.D(), p.Timeout.D())
		}
		if p.Price != nil {
			errs = append(errs, p.Price.problems(where)...)
		}
		errs = append(errs, p.providerProblems(where)...)
		errs = append(errs, p.providerSettingProblems(where)...)
		if p.MaxTokens < 0 {
			add("%s.max_tokens must be 0 (the default) or more", where)
		}
		if p.MaxRetries != nil && *p.MaxRetries < 0 {
			add("%s.max_retries (%d) must be 0 or more (0: no retries; omit it for the default, 1)", where, *p.MaxRetries)
		} else if p.MaxRetries != nil && *p.MaxRetries > MaxProviderRetries {
			add("%s.max_retries (%d) must be at most %d: each retry is another paid call to the provider (and another wait) for the same job; a provider that fails that often is better failed over (omit it for the default, 1)",
				where, *p.MaxRetries, MaxProviderRetries)
		}
		// The ranges of the three deadlines are in rangeProblems; their order
		// is judged only between values in range, so one bad value is one
		// message.
		switch {
		case p.Timeout <= 0 || p.FirstByteTimeout <= 0 || p.FirstByteTimeout < p.Timeout:
		case p.unstreamed() && p.FirstByteTimeout == p.Timeout:
			// Its default: the whole answer is its first byte.
		case p.unstreamed():
			add("%s.first_byte_timeout (%s) must be at most timeout (%s): with stream: false the answer's first byte comes only with the whole answer, "+
				"which timeout bounds; leave first_byte_timeout out (it is then timeout)", where, p.FirstByteTimeout.D(), p.Timeout.D())
		default:
			add("%s.first_byte_timeout (%s) must be below timeout (%s): the whole attempt includes the wait for its first byte", where, p.FirstByteTimeout.D(), p.Timeout.D())
		}
		switch {
		case p.Timeout <= 0 || p.StreamIdleTimeout <= 0 || p.StreamIdleTimeout < p.Timeout:
		case p.unstreamed():
			// It does not apply, but is refused as with stream: true: it
			// is a mistake either way, and switching stream back on must
			// not turn an accepted file into a refused one. The message
			// says to leave it out.
			add("%s.stream_idle_timeout (%s) must be below timeout (%s); with stream: false it does not apply (the answer comes whole, with no gaps between chunks to bound), "+
				"so leave stream_idle_timeout out", where, p.StreamIdleTimeout.D(), p.Timeout.D())
		default:
			add("%s.stream_idle_timeout (%s) must be below timeout (%s), or a stalled stream is only ever cut by the total timeout", where, p.StreamIdleTimeout.D(), p.Timeout.D())
		}
		if p.MaxIdleConns < 0 {
			add("%s.max_idle_conns must be 0 (the default, 256) or more", where)
		}
		if p.MaxResponseBytes <= 0 {
			add("%s.max_response_bytes must be positive, not %d (omit it for the default, 8388608)", where, p.MaxResponseBytes)
		}
	}
	aliases := map[string]string{}
	for name, r := range c.Routes {
		if r == nil {
			continue
		}
		for _, m := range r.Models {
			if m == "" {
				add("routes.%s.models: an empty model name (\"\") can never be reached: a chat completion with model \"\" (or none) is looked up only as a route, never as a model: remove it", name)
				continue
			}
			if why := nameProblem(m); why != "" {
				add("routes.%s.models: %q: a model name %s: list each model a chat completion may ask for as its own item, exactly as callers send it (`- gpt-4o` and `- gpt-4o-mini`, not `- gpt-4o, gpt-4o-mini`)", name, m, why)
				continue
			}
			if _, isRoute := c.Routes[m]; isRoute {
				add("routes.%s.models: %q is also a route name", name, m)
			} else if other, dup := aliases[m]; dup {
				add("routes.%s.models: %q is already a model of route %s", name, m, other)
			}
			aliases[m] = name
		}
	}
	needModel := map[string]bool{}
	for _, name := range sortedRoutes(c.Routes) {
		r := c.Routes[name]
		if name == "" {
			add("routes: a route's name is empty (\"\": only a chat completion with model \"\" could reach it): give the route a name")
		} else if why := nameProblem(name); why != "" {
			add("routes: the route name %q %s: rename it, e.g. %q", name, why, saneName(name))
		}
		field := "targets"
		if r != nil && len(r.Providers) > 0 {
			field = "providers"
		}
		if r != nil && r.bothGiven {
			add("routes.%s: give either targets or providers (shorthand), not both", name)
		}
		if r == nil || len(r.Targets) == 0 {
			add("routes.%s.targets: list at least one {provider, model} target, primary first (or providers: [a, b] as shorthand)", name)
			continue
		}
		seen := map[string]bool{}
		for i, t := range r.Targets {
			if why := modelNameProblem(t.Model); why != "" {
				add("routes.%s.%s[%d].model %q: %s", name, field, i, t.Model, why)
			}
			p := c.Provider(t.Provider)
			if p == nil {
				add("routes.%s.%s: %q is not a configured provider (have: %s)", name, field, t.Provider, strings.Join(sortedKeys(names), ", "))
				continue
			}
			if t.Model == "" && p.Model == "" && p.Type != "scripted" {
				needModel[p.Name] = true
			}
			if t.Price != nil {
				errs = append(errs, t.Price.problems(fmt.Sprintf("routes.%s.%s[%d]", name, field, i))...)
			}
			if t.ContextWindow != nil && *t.ContextWindow < 1 {
				add("routes.%s.%s[%d].context_window (%d) must be 1 or more tokens (omit it for the provider's, %d)", name, field, i, *t.ContextWindow, p.ContextWindow)
			}
			if t.Tokenizer != "" && !slices.Contains(Tokenizers, t.Tokenizer) {
				add("routes.%s.%s[%d].tokenizer: %q is not one of %s (omit it to choose by the model's name)", name, field, i, t.Tokenizer, strings.Join(Tokenizers, ", "))
			}
			id := TargetID(p, t.Model)
			if seen[id] {
				add("routes.%s.%s[%d]: target %s is listed twice", name, field, i, id)
			}
			seen[id] = true
		}
		switch r.HedgeAfter {
		case "adaptive", "off":
		default:
			if d, err := time.ParseDuration(r.HedgeAfter); err != nil || d <= 0 {
				add("routes.%s.hedge_after: %q is not a positive duration, \"adaptive\" or \"off\"", name, r.HedgeAfter)
			} else if p := c.Provider(r.Targets[0].Provider); p != nil {
				// A primary still silent at its first-byte deadline becomes
				// unknown, which blocks every new attempt: a hedge due
				// later never starts (an adaptive delay stays below it).
				limit, which := firstByteLimit(p)
				if limit > 0 && Duration(d) >= limit {
					add("routes.%s.hedge_after (%s) is not below the primary's %s (%s, provider %s): a primary still silent then becomes unknown, which blocks every new attempt, so the hedge would never start; set hedge_after below it (or adaptive)",
						name, d, which, limit.D(), p.Name)
				}
			}
		}
		errs = append(errs, r.hedgeProblems(name)...)
		errs = append(errs, r.hedgeBoundProblems(name)...)
		if p := c.Provider(r.Targets[0].Provider); p != nil {
			errs = append(errs, r.hedgeMinDeadlineProblems(name, p)...)
		}
		errs = append(errs, r.hedgeNoEffectProblems(name)...)
		if p := *r.HedgeBudget.Percent; !(p >= 0 && p <= 100) { // NaN too
			add("routes.%s.hedge_budget.percent: %v is not between 0 and 100", name, p)
		}
		if n := *r.HedgeBudget.MinConcurrent; n < 0 {
			add("routes.%s.hedge_budget.min_concurrent (%d) must be 0 or more (omit it for the default, 3)", name, n)
		}
		if r.MaxInflight < 1 {
			add("routes.%s.max_inflight (%d) must be at least 1 (omit it for the default, 2)", name, r.MaxInflight)
		}
		if r.MaxAttempts < 1 {
			add("routes.%s.max_attempts (%d) must be at least 1 (omit it for the default, 4)", name, r.MaxAttempts)
		}
	}
	for i, p := range c.Providers {
		if needModel[p.Name] {
			add("providers[%d] (%s).model is required for type %s when a route's target names no model", i, p.Name, p.Type)
		}
	}
	errs = append(errs, c.rangeProblems()...)
	errs = append(errs, c.envNameProblems()...)
	errs = append(errs, c.secretVarProblems()...)
	errs = append(errs, c.targetPriceProblems()...)
	errs = append(errs, c.targetSettingProblems()...)
	if p := c.Webhooks.backoffCapProblem(); p != "" {
		errs = append(errs, p)
	}
	return errs
}

// sameListener says whether two host:port addresses would bind the same port:
// equal hosts, or one of them every interface. Port 0 (any free port) never
// collides.
func sameListener(a, b string) bool {
	ha, sa, errA := net.SplitHostPort(a)
	hb, sb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil {
		return false
	}
	// As the listener reads them: 08080 is 8080, and a service name
	// (http-alt) its number, or two spellings of one port passed the check
	// and the start failed on a port "another process" held.
	pa, errA := net.LookupPort("tcp", sa)
	pb, errB := net.LookupPort("tcp", sb)
	if errA != nil || errB != nil || pa != pb || pa == 0 {
		return false
	}
	ha, hb = listenHost(ha), listenHost(hb)
	wildcard := func(h string) bool { return h == "" || h == "0.0.0.0" }
	return strings.EqualFold(ha, hb) || wildcard(ha) || wildcard(hb)
}

// listenHost is a listen address's host as the socket it binds: an IP
// address in one spelling (an IPv4-mapped IPv6 address as its IPv4 address,
// [0:0:0:0:0:0:0:1] as ::1), every interface ([::], [0::0], 0.0.0.0) as
// 0.0.0.0, and localhost as 127.0.0.1 (Go listens on localhost's IPv4
// address: the same socket as 127.0.0.1 written out, not ::1's). Compared as
// text, two spellings of one socket passed the check and serve then failed
// at start on a port "another process" held. A host name is kept as written.
func listenHost(h string) string {
	if strings.EqualFold(h, "localhost") {
		return "127.0.0.1"
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return h
	}
	a = a.Unmap()
	if a.IsUnspecified() {
		return "0.0.0.0"
	}
	return a.String()
}

// portProblem says what is wrong with a listen address's port written as a
// number outside 0–65535, with a sign (127.0.0.1:-1, which passed as a
// "service name" and failed only at start), as what is no service name
// either, or as a service name this machine does not know, or "".
//
// A service name (http, http-alt) is accepted when net.LookupPort knows it:
// the lookup serve's listener makes (net.Listen resolves the port the same
// way), which reads /etc/services and Go's built-in table, without the
// network. A name it does not know — 808O, a letter O typed for a zero;
// 8080x — passed the load and `router config check`, and serve then failed
// at start ("lookup tcp/808O: unknown port").
func portProblem(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	if port == "" {
		return ""
	}
	if port[0] == '-' || port[0] == '+' {
		return fmt.Sprintf("%s: port %q has a sign: write the port as a number from 0 to 65535 without one (for example 127.0.0.1:8080)", addr, port)
	}
	n, err := strconv.ParseUint(port, 10, 64)
	if err == nil {
		if n <= 65535 {
			return ""
		}
		return fmt.Sprintf("%s: port %s is out of range (0 to 65535)", addr, port)
	}
	if strings.Trim(port, "0123456789") == "" || !serviceName(port) {
		// All digits: beyond uint64.
		return fmt.Sprintf("%s: port %q is neither a number from 0 to 65535 nor a service name (letters, digits and hyphens, such as http): write the port as a number (for example 127.0.0.1:8080)", addr, port)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Sprintf("%s: port %q is neither a number nor a service name known on this machine (/etc/services), so the listener could not open it: write the port as a number from 0 to 65535 (for example 127.0.0.1:8080)", addr, port)
	}
	return ""
}

// serviceName reports whether s is written as a service name (RFC 6335:
// letters, digits and hyphens, with a letter, not starting or ending with a
// hyphen), as /etc/services names them.
func serviceName(s string) bool {
	if len(s) > 15 || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	letter := false
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			letter = true
		case r >= '0' && r <= '9' || r == '-':
		default:
			return false
		}
	}
	return letter
}

func sortedRoutes(m map[string]*Route) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// IsLoopback says whether a host:port listens on loopback only: 127.0.0.0/8,
// ::1 or localhost. An empty host (all interfaces) is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// finiteNonNegative refuses negatives, NaN (which compares false with
// everything, so `x < 0` lets it through) and infinities: a YAML .nan or .inf
// in a price or a rate would reach JSON encoding and arithmetic.
func finiteNonNegative(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }

// MaxPricePerMTok is the largest price the configuration accepts, in USD per
// million tokens: thousands of times any model's, so no real contract is
// refused, while a typo of a stray exponent (1e308) is. A price near
// float8's range made an attempt's cost (numeric, read as float8) overflow,
// and the job holding it could no longer be read.
const MaxPricePerMTok = 1_000_000

// problems says what is wrong with the price of the provider or target at
// where (its keys' presence is checked on the file: priceKeyProblems).
func (p *Price) problems(where string) []string {
	if !finiteNonNegative(p.InputPerMTok) || !finiteNonNegative(p.OutputPerMTok) {
		return []string{fmt.Sprintf("%s.price: input_per_mtok and output_per_mtok must be 0 or more (USD per million tokens)", where)}
	}
	var out []string
	for _, k := range []struct {
		key string
		v   float64
	}{{"input_per_mtok", p.InputPerMTok}, {"output_per_mtok", p.OutputPerMTok}} {
		if k.v > MaxPricePerMTok {
			out = append(out, fmt.Sprintf("%s.price.%s (%g) is above %d: prices are USD per million tokens, and no model costs that much; "+
				"write your contract's price per million tokens (3 for $3 per million tokens, 0.15 for 15 cents per million)", where, k.key, k.v, MaxPricePerMTok))
		}
	}
	return out
}

// equal says whether l and o take the same effect: a field left out is 0
// (unlimited), a burst left out (or 0) is the rate rounded up, as the API's
// limiter makes it, and a burst without a rate limits nothing. Two keys of one
// owner written `{requests_per_second: 5, burst: 5}` and
// `{requests_per_second: 5}` have the same limits.
func (l Limits) equal(o Limits) bool {
	return l.effective() == o.effective()
}

// effectiveLimits are Limits as they are enforced (see equal).
type effectiveLimits struct {
	maxLive int
	rate    float64
	burst   int
}

func (l Limits) effective() effectiveLimits {
	var e effectiveLimits
	if l.MaxLiveJobs != nil {
		e.maxLive = *l.MaxLiveJobs
	}
	if l.RequestsPerSecond != nil {
		e.rate = *l.RequestsPerSecond
	}
	if e.rate <= 0 {
		return effectiveLimits{maxLive: e.maxLive}
	}
	if l.Burst != nil {
		e.burst = *l.Burst
	}
	if e.burst <= 0 {
		e.burst = max(1, int(math.Ceil(e.rate)))
	}
	return e
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// positiveOr is d when it is positive, else or: a written bound that the
// file's other checks refuse bounds no default.
func positiveOr(d, or Duration) Duration {
	if d > 0 {
		return d
	}
	return or
}

// def sets *p to v when it is the zero value (a field the file left out).
func def[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

// normalDatabaseURL is url without surrounding white space and with its
// scheme in lower case: the check below accepts POSTGRES://, but pgx reads a
// URL only by a lower-case scheme, and would take any other for key=value
// settings and connect somewhere else (the local socket, as the OS user).
func normalDatabaseURL(url string) string {
	url = strings.TrimSpace(url)
	for _, scheme := range []string{"postgres://", "postgresql://"} {
		if len(url) >= len(scheme) && strings.EqualFold(url[:len(scheme)], scheme) {
			return scheme + url[len(scheme):]
		}
	}
	return url
}

// databaseURLProblem says why url (database_url, or DATABASE_URL over it)
// cannot name a database, or "": empty (SPEC §11's embedded default),
// `embedded`, a postgres:// or postgresql:// URL, or PostgreSQL's key=value
// settings. Anything else would reach the driver, whose "cannot parse"
// does not say what was meant — often a misspelt `embedded` — or worse: pgx
// reads whatever is not a postgres:// URL as key=value settings, so a URL
// with a misspelt scheme and a query (postgress://app:pw@db/x?sslmode=require)
// became one unknown setting "postgress://app:pw@db/x?sslmode", sent to the
// default host, whose refusal quoted it, password and all. The value is
// never repeated (but for a misspelt `embedded`): it may hold a password.
func databaseURLProblem(url string) string {
	lower := strings.ToLower(strings.TrimSpace(url))
	switch {
	case url == "" || url == EmbeddedDatabase,
		strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"),
		keywordSettings(url):
		return ""
	case strings.HasPrefix(lower, "emb"):
		return fmt.Sprintf("database_url %q: did you mean %q (the embedded local PostgreSQL)?", url, EmbeddedDatabase)
	}
	const forms = "a PostgreSQL URL (postgres://user:password@host:5432/dbname), key=value settings (host=… dbname=…) or %q; the value is not shown here, since it may hold a password"
	if scheme, ok := urlScheme(lower); ok && (strings.HasPrefix(scheme, "post") || strings.HasPrefix(scheme, "pg")) {
		return fmt.Sprintf("database_url (or DATABASE_URL) starts with a misspelt scheme: did you mean postgres:// (or postgresql://, with two slashes)? It must be "+forms, EmbeddedDatabase)
	}
	return fmt.Sprintf("database_url (or DATABASE_URL) is not "+forms, EmbeddedDatabase)
}

// urlScheme is the scheme of s when s starts as a URL does: a scheme
// (RFC 3986: a letter, then letters, digits, +, - or .) and ":/".
func urlScheme(s string) (string, bool) {
	i := strings.Index(s, ":/")
	if i <= 0 {
		return "", false
	}
	for j, r := range s[:i] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || j > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return "", false
		}
	}
	return s[:i], true
}

// keywordSettings reports whether s is PostgreSQL's key=value settings as
// pgx reads them (pgconn's parseKeywordValueSettings: a keyword, "=", a
// value either quoted with ' or running to the next white space, a
// backslash escaping the next byte), every keyword a word (letters, digits
// and _, as libpq's are). pgx itself takes any text before an "=" for a
// keyword; a URL is never one.
func keywordSettings(s string) bool {
	const space = " \t\n\r\v\f"
	s = strings.TrimLeft(s, space)
	if s == "" {
		return false
	}
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || !isKeyword(strings.Trim(s[:eq], space)) {
			return false
		}
		s = strings.TrimLeft(s[eq+1:], space)
		end, quoted := 0, s != "" && s[0] == '\''
		if quoted {
			end = 1
		}
		for ; end < len(s); end++ {
			if quoted && s[end] == '\'' || !quoted && strings.IndexByte(space, s[end]) >= 0 {
				break
			}
			if s[end] == '\\' {
				end++
			}
		}
		if quoted {
			if end >= len(s) {
				return false // unterminated
			}
			end++ // the closing quote
		}
		s = strings.TrimLeft(s[min(end, len(s)):], space)
	}
	return true
}

// isKeyword: a letter or _, then letters, digits or _ (as a variable name).
func isKeyword(s string) bool { return isEnvName(s) }

// hostIs reports whether baseURL names host (or, empty, whether the adapter's
// default does: emptyIs). A keyless server of one's own (vLLM, Ollama, a
// proxy that adds the key) is any other host.
func hostIs(baseURL, host string, emptyIs bool) bool {
	if baseURL == "" {
		return emptyIs
	}
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), host)
}

// unstreamed reports whether p is an HTTP provider (openai, anthropic) called
// without streaming (stream: false): its answer's first byte comes only with
// the whole answer, so its first_byte_timeout is its timeout (WithDefaults).
func (p Provider) unstreamed() bool {
	return (p.Type == "openai" || p.Type == "anthropic") && p.Stream != nil && !*p.Stream
}
