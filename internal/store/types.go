package store

import (
	"encoding/json"
	"time"
)

// Job states (SPEC §3).
const (
	JobPending   = "pending"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
	JobCancelled = "cancelled"
	JobUnknown   = "unknown"
)

// Attempt states (SPEC §3).
const (
	AttemptStarting  = "starting"
	AttemptRunning   = "running"
	AttemptWon       = "won"
	AttemptLost      = "lost"
	AttemptFailed    = "failed"
	AttemptInvalid   = "invalid"
	AttemptCancelled = "cancelled"
	AttemptUnknown   = "unknown"
)

// Attempt roles (SPEC §2).
const (
	RolePrimary  = "primary"
	RoleRetry    = "retry"
	RoleFailover = "failover"
	RoleHedge    = "hedge"
)

// IsTerminal reports whether a job state is final for waiting purposes.
func IsTerminal(state string) bool {
	return state == JobSucceeded || state == JobFailed || state == JobCancelled
}

// Job is the durable record of one intent, with what happened to it.
type Job struct {
	ID             string          `json:"id"`
	Owner          string          `json:"owner"`
	Operation      string          `json:"operation"`
	IdempotencyKey string          `json:"idempotency_key"`
	PromptVersion  string          `json:"prompt_version"`
	Route          string          `json:"route"`
	Input          json.RawMessage `json:"input"`
	Params         json.RawMessage `json:"params,omitempty"`
	State          string          `json:"state"`
	Version        int64           `json:"version"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
	FinishedAt     *time.Time      `json:"finished_at,omitempty"`
	KeyExpiresAt   *time.Time      `json:"key_expires_at"`
	Result         json.RawMessage `json:"result"`
	CompletedBy    *string         `json:"completed_by"`
	Error          *string         `json:"error"`
	Routing        json.RawMessage `json:"routing"`
	Attempts       []Attempt       `json:"attempts"`
	RaceEvents     []RaceEvent     `json:"race_events"`
	// CostUSD sums its attempts' costs; LostCostUSD those of attempts that did
	// not win (the price of hedging and retries). Both are computed when the job
	// is read. CostUSD is absent when no attempt has a cost, or when an
	// attempt with usage has none (its target is unpriced: a partial sum would
	// read as the whole); LostCostUSD likewise over the attempts that did not
	// win.
	CostUSD     *float64 `json:"cost_usd,omitempty"`
	LostCostUSD *float64 `json:"lost_cost_usd,omitempty"`
	// KeyTaken says that the job's key expired and a newer job took it over
	// (KeyExpiresAt is then when it expired): the job can no longer be
	// retried (ErrKeyRebound), and a resend with its key reaches the newer
	// job. Read with the job; race.NextStep says it.
	KeyTaken bool `json:"-"`
	// AttemptBase: attempts made before the caller's last explicit retry.
	AttemptBase int `json:"-"`
	// RunElapsed, on a job read to be run (GetJobToRun), is how long its
	// current run had lasted when it was read, on the database clock: since
	// its creation, or since the caller's last explicit retry. Zero on a job
	// read otherwise, and on a job CreateJob has just created.
	RunElapsed time.Duration `json:"-"`

	// WonResult is set on the job a win returns (CompleteJob): the result as
	// the winning attempt offered it, byte for byte. Result holds the same
	// JSON as PostgreSQL's jsonb gives it back (keys reordered, spaces after
	// ':' and ','). Never stored, never encoded.
	WonResult json.RawMessage `json:"-"`
	// ParsedInput, on a job the API plans before creating it, is Input as the
	// API already parsed and checked it (a JSON object, numbers as
	// json.Number), so the prompt renders without decoding it again. Nil on a
	// job read from the database. Never stored, never encoded, never modified.
	ParsedInput map[string]any `json:"-"`

	fingerprint []byte
	// HeldBy is set on a job CreateJob just created: the process that holds its
	// orchestration lease from the start (so it need not take it again).
	HeldBy string `json:"-"`
	// LeaseSentAt is set with HeldBy: this process's clock (with its
	// monotonic reading) read just before the claim statement that set the
	// job's lease and its first attempt's was sent — of the earliest try of
	// the claim that may have committed, when its answer was lost and it was
	// run again. The database set those leases from its now() in that
	// statement, so never before it: they run out no sooner than LeaseSentAt
	// plus NewJob.LeaseFor on this clock. Zero on a job read otherwise.
	LeaseSentAt time.Time `json:"-"`
}

// Attempt is one try on one provider.
type Attempt struct {
	ID                 string          `json:"id"`
	JobID              string          `json:"-"`
	Seq                int             `json:"seq"`
	Provider           string          `json:"provider"`
	Model              string          `json:"model"`
	ResponseModel      *string         `json:"response_model,omitempty"`
	Role               string          `json:"role"`
	State              string          `json:"state"`
	ReadVersion        int64           `json:"read_version"`
	CreatedAt          time.Time       `json:"created_at"`
	StartedAt          *time.Time      `json:"started_at"`
	FinishedAt         *time.Time      `json:"finished_at"`
	LatencyMS          *int64          `json:"latency_ms"`
	Usage              json.RawMessage `json:"usage"`
	ProviderResponseID *string         `json:"provider_response_id"`
	Error              json.RawMessage `json:"error"`
	ValidationErrors   json.RawMessage `json:"validation_errors"`
	LeaseOwner         *string         `json:"-"`
	LeaseExpiresAt     *time.Time      `json:"-"`
	// CostUSD is usage × the target's price (absent without either).
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// RaceEvent records what happened to a result that did not win, and similar.
type RaceEvent struct {
	ID        int64           `json:"id"`
	AttemptID *string         `json:"attempt_id"`
	Kind      string          `json:"kind"`
	Provider  *string         `json:"provider"`
	LatencyMS *int64          `json:"latency_ms"`
	Usage     json.RawMessage `json:"usage"`
	Detail    *string         `json:"detail"`
	CreatedAt time.Time       `json:"created_at"`
}

// FinalState returns state when it can never change again (succeeded,
// cancelled) and "" otherwise: an announced state that is not final may be
// stale by the time it is read, and must be checked in the database.
func FinalState(state string) string {
	if state == JobSucceeded || state == JobCancelled {
		return state
	}
	return ""
}
