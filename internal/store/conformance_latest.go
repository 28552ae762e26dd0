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
// cache) bounds the scan by it too. The latest run of a group is the
// gate's (ConformanceStandingOf): the one that finished last, or, when that
// is a pass, a failing run that finished after it started
// (overlappingFailureSQL), with one more range scan of the same index.
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
			CASE WHEN $3 THEN l.cases END, l.suite_digest, ` + digestSQL("l", "prompt_digest") + `, ` + digestSQL("l", "target_digest") + `, l.legacy,
			l.router_version, l.started_at, l.finished_at,
			p.finished_at, ` + freshSQL("p.finished_at", "$4") + `
		FROM g
		CROSS JOIN LATERAL (
			SELECT r.id, r.passed, r.started_at FROM conformance_runs r
			WHERE ` + group + `
			ORDER BY r.finished_at DESC, r.id DESC LIMIT 1) t
		LEFT JOIN LATERAL (
			SELECT r.id FROM conformance_runs r
			WHERE ` + group + ` AND ` + overlappingFailureSQL("t", "r") + `
			ORDER BY r.finished_at DESC, r.id DESC LIMIT 1) f ON true
		JOIN conformance_runs l ON l.id = coalesce(f.id, t.id)
		LEFT JOIN LATERAL (
			SELECT r.finished_at FROM conformance_runs r
			WHERE ` + group + ` AND r.passed
			ORDER BY r.finished_at DESC LIMIT 1) p ON true
		WHERE ($1 = '' OR g.provider = $1) AND ($2 = '' OR g.prompt = $2)
		ORDER BY l.provider, l.prompt, l.prompt_version, l.model`
}
