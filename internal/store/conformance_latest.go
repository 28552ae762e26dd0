package store

// latestConformanceSQL is LatestConformanceRuns' statement: $1 the provider
// ("": any), $2 the prompt ("": any), $3 whether to include the cases, $4 the
// maximum age in microseconds. byProvider is $1 != "".
//
// It reads a number of index entries that grows with the number of
// provider × model × prompt × prompt version groups, not with the history of
// runs (migration 0025): a loose index scan over conformance_runs_group_latest
// finds each group with one lookup (the first group after the one before),
// and each group's latest run and latest pass are one lookup each, in
// conformance_runs_group_latest and conformance_runs_group_passing. The
// provider filter is in the statement's text, not an empty-means-any condition,
// so that a generic plan (a statement run often through pgx's statement
// cache) bounds the scan by it too.
// latestConformanceSQLs are both texts, made once: [0] any provider, [1] by
// provider.
var latestConformanceSQLs = [2]string{latestConformanceSQL(false), latestConformanceSQL(true)}

// b2i is 1 for true, 0 for false: an index into a pair of statement texts.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func latestConformanceSQL(byProvider bool) string {
	anchor, step := "", ""
	if byProvider {
		anchor, step = "WHERE r.provider = $1", "r.provider = $1 AND "
	}
	const group = "r.provider = g.provider AND r.model = g.model AND r.prompt = g.prompt AND r.prompt_version = g.prompt_version"
	return `
		WITH RECURSIVE g AS (
			(SELECT r.provider, r.model, r.prompt, r.prompt_version FROM conformance_runs r
			` + anchor + `
			ORDER BY r.provider, r.model, r.prompt, r.prompt_version LIMIT 1)
			UNION ALL
			SELECT n.provider, n.model, n.prompt, n.prompt_version FROM g, LATERAL (
				SELECT r.provider, r.model, r.prompt, r.prompt_version FROM conformance_runs r
				WHERE ` + step + `(r.provider, r.model, r.prompt, r.prompt_version) > (g.provider, g.model, g.prompt, g.prompt_version)
				ORDER BY r.provider, r.model, r.prompt, r.prompt_version LIMIT 1) n)
		SELECT l.id, l.provider, l.model, l.prompt, l.prompt_version, l.passed, l.cases_total, l.cases_passed,
			l.cases, l.suite_digest, coalesce(l.prompt_digest, ''), coalesce(l.target_digest, ''), l.router_version, l.started_at, l.finished_at,
			p.finished_at, ` + freshSQL("p.finished_at", "$4") + `
		FROM g
		CROSS JOIN LATERAL (
			SELECT r.id, r.provider, r.model, r.prompt, r.prompt_version, r.passed, r.cases_total, r.cases_passed,
				CASE WHEN $3 THEN r.cases END AS cases, r.suite_digest, r.prompt_digest, r.target_digest, r.router_version, r.started_at, r.finished_at
			FROM conformance_runs r
			WHERE ` + group + `
			ORDER BY r.finished_at DESC, r.id DESC LIMIT 1) l
		LEFT JOIN LATERAL (
			SELECT r.finished_at FROM conformance_runs r
			WHERE ` + group + ` AND r.passed
			ORDER BY r.finished_at DESC LIMIT 1) p ON true
		WHERE ($1 = '' OR g.provider = $1) AND ($2 = '' OR g.prompt = $2)
		ORDER BY l.provider, l.prompt, l.prompt_version, l.model`
}
