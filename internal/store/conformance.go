package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ConformanceRun is one stored run of one provider against the conformance suite
// of one prompt version (SPEC §9).
type ConformanceRun struct {
	ID            int64           `json:"id"`
	Provider      string          `json:"provider"`
	Model         string          `json:"model"`
	Prompt        string          `json:"prompt"`
	PromptVersion string          `json:"prompt_version"`
	Passed        bool            `json:"passed"`
	CasesTotal    int             `json:"cases_total"`
	CasesPassed   int             `json:"cases_passed"`
	Cases         json.RawMessage `json:"cases,omitempty"`
	SuiteDigest   string          `json:"suite_digest,omitempty"`
	// PromptDigest is the content digest of the prompt the run was made
	// against (prompt.Prompt.Digest); "" for a legacy run recorded before
	// the router recorded it (migration 0023), which counts for any content.
	PromptDigest string `json:"prompt_digest,omitempty"`
	// TargetDigest is the digest of the target's settings the run was made
	// against (conformance.TargetDigest: its type, base URL, model and
	// request settings); "" for a legacy run recorded before the router
	// recorded it (migration 0024), which counts for any settings.
	TargetDigest string `json:"target_digest,omitempty"`
	// Legacy: the run was recorded before migration 0028 without both
	// digests. Only a legacy run may lack one (the database's
	// conformance_runs_digests_required_upgrade_router check: an older
	// router binary can no longer record a run without them), and only on a
	// legacy run does a missing digest count for anything; a run that is not
	// legacy and somehow lacks one reads back with a digest that matches
	// nothing (unrecordedDigest).
	Legacy        bool      `json:"legacy,omitempty"`
	RouterVersion string    `json:"router_version"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at"`
	// LastPassAt is the finish of the latest passing run of the same provider,
	// model and prompt version (this run when it passed). Set by
	// LatestConformanceRuns.
	LastPassAt *time.Time `json:"last_pass_at"`
	// Fresh: LastPassAt is younger than ConformanceFilter.MaxAge on the
	// database clock, by the gate's rule (ConformanceStanding.Fresh). Set by
	// LatestConformanceRuns. With Passed it is the gate's verdict on this
	// provider, model and prompt version, for the prompt content recorded in
	// PromptDigest and the target settings recorded in TargetDigest.
	Fresh bool `json:"-"`
}

// NewConformanceRun is a finished run to record.
type NewConformanceRun struct {
	Provider      string
	Model         string
	Prompt        string
	PromptVersion string
	Passed        bool
	CasesTotal    int
	CasesPassed   int
	// Cases is the per-case detail, stored as JSON (nil: an empty list).
	Cases       any
	SuiteDigest string
	// PromptDigest is the prompt's content digest (prompt.Prompt.Digest);
	// required.
	PromptDigest string
	// TargetDigest is the target's settings digest (conformance.TargetDigest):
	// a hex SHA-256; required.
	TargetDigest  string
	RouterVersion string
	// Duration is how long the run took (a monotonic measurement); the row's
	// finished_at is the database's now() and started_at is now() - Duration.
	Duration time.Duration
}

// RecordConformanceRun stores a finished run. A run passes only when every case,
// and at least one, passed.
func (s *Store) RecordConformanceRun(ctx context.Context, r NewConformanceRun) (*ConformanceRun, error) {
	switch {
	case r.Provider == "" || r.Prompt == "" || r.PromptVersion == "":
		return nil, errors.New("record conformance run: provider, prompt and prompt version are required")
	case r.CasesTotal < 0 || r.CasesPassed < 0 || r.CasesPassed > r.CasesTotal:
		return nil, fmt.Errorf("record conformance run: %d of %d cases passed is not a count", r.CasesPassed, r.CasesTotal)
	case r.Passed && (r.CasesTotal == 0 || r.CasesPassed != r.CasesTotal):
		return nil, fmt.Errorf("record conformance run: a run with %d of %d cases passed cannot pass", r.CasesPassed, r.CasesTotal)
	case r.PromptDigest == "" || r.TargetDigest == "":
		// A run without them would count for any prompt content or target
		// settings; the database refuses it too (migration 0028).
		return nil, fmt.Errorf("record conformance run: a run records the prompt's content digest and the target's settings digest (have %q and %q)",
			r.PromptDigest, r.TargetDigest)
	case !hexSHA256(r.TargetDigest):
		return nil, fmt.Errorf("record conformance run: target digest %q is not a hex SHA-256 (conformance.TargetDigest makes one)", r.TargetDigest)
	}
	cases := []byte("[]")
	if r.Cases != nil {
		b, err := json.Marshal(r.Cases)
		if err != nil {
			return nil, fmt.Errorf("record conformance run: encode cases: %w", err)
		}
		cases = b
	}
	run := &ConformanceRun{
		Provider: r.Provider, Model: r.Model, Prompt: r.Prompt, PromptVersion: r.PromptVersion, Passed: r.Passed,
		CasesTotal: r.CasesTotal, CasesPassed: r.CasesPassed, Cases: cases, SuiteDigest: r.SuiteDigest,
		PromptDigest: r.PromptDigest, TargetDigest: r.TargetDigest, RouterVersion: r.RouterVersion,
	}
	err := s.pool.QueryRow(ctx, `INSERT INTO conformance_runs (provider, model, prompt, prompt_version, passed,
			cases_total, cases_passed, cases, suite_digest, router_version, started_at, finished_at, prompt_digest, target_digest)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() - $11::bigint * interval '1 microsecond', now(), NULLIF($12, ''), NULLIF($13, ''))
		RETURNING id, started_at, finished_at`,
		r.Provider, r.Model, r.Prompt, r.PromptVersion, r.Passed, r.CasesTotal, r.CasesPassed, cases,
		r.SuiteDigest, r.RouterVersion, max(r.Duration, 0).Microseconds(), r.PromptDigest, r.TargetDigest,
	).Scan(&run.ID, &run.StartedAt, &run.FinishedAt)
	if err != nil {
		return nil, fmt.Errorf("record conformance run: %w", err)
	}
	if run.Passed {
		run.LastPassAt = &run.FinishedAt
	}
	return run, nil
}

// SamePromptContent reports whether a run recorded against the prompt content
// whose digest is ran counts for the content whose digest is now
// (prompt.Prompt.Digest): the digests are equal, or either is unknown. A
// legacy run, recorded before the router recorded digests (migrations 0023,
// 0028), counts for any content, so an upgrade withdraws no pass; a run read
// from the database has ran "" only when it is legacy (unrecordedDigest).
// The gate and the operator views judge by prompt.Prompt.SameContent, which
// also counts a run of the prompt's other spellings of the same rules (a
// default tolerance written or left out).
func SamePromptContent(ran, now string) bool { return ran == "" || now == "" || ran == now }

// hexSHA256 reports whether s is a SHA-256 in lower-case hex, the form the
// database's conformance_runs_target_digest_sha256 check holds target digests
// to (migration 0024).
func hexSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// SameTarget reports whether a run recorded against the target settings
// whose digest is ran counts for the settings whose digest is now
// (conformance.TargetDigest): the digests are equal, or either is unknown. A
// legacy run, recorded before the router recorded target digests (migrations
// 0024, 0028), counts for any settings, so an upgrade withdraws no pass (a
// run read from the database has ran "" only when it is legacy:
// unrecordedDigest); a target whose
// type, base URL or request settings changed since its run, keeping its id
// and model, is not admitted on it. The gate and the operator views both
// judge by it.
func SameTarget(ran, now string) bool { return ran == "" || now == "" || ran == now }

// ConformanceFilter narrows LatestConformanceRuns; empty fields match everything.
type ConformanceFilter struct {
	Provider string
	Prompt   string
	// WithCases includes each run's per-case details.
	WithCases bool
	// MaxAge is conformance.max_age, against which each run's Fresh is judged
	// (zero or negative: nothing is fresh, as the gate then admits no pass).
	MaxAge time.Duration
}

// unrecordedDigest is the digest a run that is not legacy reads back with
// when it has none: the database's check (migration 0028) lets no such run
// in, and should one be there (the check dropped or not yet validated), it
// matches no prompt content or target settings, rather than every one.
const unrecordedDigest = "unrecorded"

// digestSQL is the digest in column col of the run aliased r, as the gate
// and the views compare it: "" (any) only on a legacy run.
func digestSQL(r, col string) string {
	return "coalesce(" + r + "." + col + ", CASE WHEN " + r + ".legacy THEN '' ELSE '" + unrecordedDigest + "' END)"
}

// freshSQL is the conformance freshness rule, on the database clock: the pass
// that finished at col is younger than the maximum age given in microseconds
// by param. It is the gate's rule (a pass as old as max_age or older is
// refused), so a maximum age of zero or less leaves nothing fresh; no pass
// (NULL) is not fresh. ConformanceStanding and LatestConformanceRuns both use
// it, so the gate and the operator views cannot disagree.
func freshSQL(col, param string) string {
	return "coalesce(" + col + " > now() - " + param + "::bigint * interval '1 microsecond', false)"
}

// LatestConformanceRuns returns, for every provider × model × prompt × prompt
// version that has a run, its latest run (with LastPassAt, and Fresh against
// f.MaxAge), ordered by provider, prompt, version and model. Results are per
// model (SPEC §15): a target whose model changed keeps its id, and the old
// model's run says nothing of the new one. Which model, prompt content and
// target settings a target serves now is the configuration's, not the
// database's: the operator views (internal/ops) judge that, as the gate does.
func (s *Store) LatestConformanceRuns(ctx context.Context, f ConformanceFilter) ([]ConformanceRun, error) {
	rows, err := s.pool.Query(ctx, latestConformanceSQLs[b2i(f.Provider != "")],
		f.Provider, f.Prompt, f.WithCases, f.MaxAge.Microseconds())
	if err != nil {
		return nil, fmt.Errorf("read conformance runs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ConformanceRun, error) {
		var c ConformanceRun
		err := r.Scan(&c.ID, &c.Provider, &c.Model, &c.Prompt, &c.PromptVersion, &c.Passed, &c.CasesTotal, &c.CasesPassed,
			&c.Cases, &c.SuiteDigest, &c.PromptDigest, &c.TargetDigest, &c.Legacy, &c.RouterVersion, &c.StartedAt, &c.FinishedAt, &c.LastPassAt, &c.Fresh)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("read conformance runs: %w", err)
	}
	return out, nil
}

// ConformanceStanding is what the database says about one provider on exactly one
// prompt version, judged on the database clock.
type ConformanceStanding struct {
	Provider      string
	Prompt        string
	PromptVersion string
	// Latest is the latest run of exactly this version (without cases): the
	// one that finished last, or, when that passed, a failing run that
	// finished after it started (a run that tested the target while the pass
	// ran, and failed, withdraws it whatever order they were recorded in);
	// nil when there is none.
	Latest *ConformanceRun
	// LastPassAt is the finish of the latest passing run of this version; nil
	// when none passed. LastPassAge is now() minus it, on the database clock.
	LastPassAt  *time.Time
	LastPassAge time.Duration
	// Fresh: LastPassAge is below the maxAge asked for (never when maxAge is
	// zero or negative).
	Fresh bool
	// PassedVersions are other versions of the prompt this provider passed (they
	// do not count for this one).
	PassedVersions []string
	// PassedModels are the other models whose runs of exactly this version
	// passed on this provider (they do not count for the model asked for),
	// the most recent pass first; empty when any model was asked for.
	PassedModels []string
	// Now is the database's clock when it was read.
	Now time.Time
}

// Eligible reports whether the provider may take fallback traffic on this
// prompt version: its latest run passed, and that pass is younger than maxAge.
// A later failing run withdraws an earlier pass, and so does a failing run
// that finished after the pass started.
func (c *ConformanceStanding) Eligible() bool {
	return c.Latest != nil && c.Latest.Passed && c.Fresh
}

// ConformanceStanding reads the standing of provider on prompt@version, with the
// pass's age and freshness (younger than maxAge) computed by the database,
// whatever model the runs used.
func (s *Store) ConformanceStanding(ctx context.Context, provider, prompt, version string, maxAge time.Duration) (*ConformanceStanding, error) {
	return s.ConformanceStandingOf(ctx, provider, "", prompt, version, maxAge)
}

// ConformanceStandingOf is ConformanceStanding counting only the runs that
// asked for model ("": any): a pass of the model a target used to serve says
// nothing of the one it serves now (a provider's model changed in the
// configuration keeps the target's id).
func (s *Store) ConformanceStandingOf(ctx context.Context, provider, forModel, prompt, version string, maxAge time.Duration) (*ConformanceStanding, error) {
	st := &ConformanceStanding{Provider: provider, Prompt: prompt, PromptVersion: version}
	var (
		latestID              *int64
		model, digest, rv     *string
		promptDigest          *string
		targetDigest          *string
		passed, legacy        *bool
		total, passedCases    *int
		startedAt, finishedAt *time.Time
		ageMicros             *int64
		fresh                 bool
	)
	err := s.pool.QueryRow(ctx, conformanceStandingSQLs[b2i(forModel != "")],
		provider, prompt, version, maxAge.Microseconds(), forModel,
	).Scan(&st.Now, &latestID, &model, &passed, &total, &passedCases, &digest, &rv, &startedAt, &finishedAt, &promptDigest, &targetDigest, &legacy,
		&st.LastPassAt, &ageMicros, &fresh, &st.PassedVersions, &st.PassedModels)
	if err != nil {
		return nil, fmt.Errorf("read conformance standing of %s on %s@%s: %w", provider, prompt, version, err)
	}
	if latestID != nil {
		st.Latest = &ConformanceRun{
			ID: *latestID, Provider: provider, Model: *model, Prompt: prompt, PromptVersion: version, Passed: *passed,
			CasesTotal: *total, CasesPassed: *passedCases, SuiteDigest: *digest, PromptDigest: *promptDigest, TargetDigest: *targetDigest,
			Legacy: *legacy, RouterVersion: *rv, StartedAt: *startedAt, FinishedAt: *finishedAt, LastPassAt: st.LastPassAt,
		}
	}
	if ageMicros != nil {
		st.LastPassAge = time.Duration(*ageMicros) * time.Microsecond
	}
	st.Fresh = fresh && st.LastPassAt != nil
	return st, nil
}
