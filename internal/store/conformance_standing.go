package store

// conformanceStandingSQL is ConformanceStandingOf's statement: $1 the
// provider, $2 the prompt, $3 its version, $4 the maximum age in
// microseconds, $5 the model ("": any). byModel is $5 != "".
//
// Every part of it is served by an index and reads a number of entries that
// grows with the number of groups, not with the history of runs (migration
// 0025): the latest run and the latest pass are one lookup each (in
// conformance_runs_group_latest and conformance_runs_group_passing for a
// model, in conformance_runs_latest and conformance_runs_passing for any);
// the other passed versions are a loose index scan over the prompt's passed
// versions, and the other passed models one over the provider's passed
// models with one lookup each. The model condition is in the statement's
// text, not an empty-means-any condition, so that a generic plan (the gate asks
// often, through pgx's statement cache) uses the model's indexes too.
//
// The latest run is the one that finished last, except that a pass does not
// count when a failing run of the same group finished after the pass started
// (overlappingFailureSQL): a slow pass that started before an operator's
// failing run, and was recorded after it, must not re-admit the target. That
// is one more range scan of the same index, over the runs that finished while
// the pass ran.
// conformanceStandingSQLs are both texts, made once: [0] any model, [1] by
// model.
var conformanceStandingSQLs = [2]string{conformanceStandingSQL(false), conformanceStandingSQL(true)}

func conformanceStandingSQL(byModel bool) string {
	model, versionOfModel := "", ""
	if byModel {
		model = " AND model = $5"
		versionOfModel = ` AND EXISTS (SELECT FROM conformance_runs o
			  WHERE o.provider = $1 AND o.model = $5 AND o.prompt = $2 AND o.prompt_version = v.prompt_version AND o.passed)`
	}
	return `
		SELECT now(),
			l.id, l.model, l.passed, l.cases_total, l.cases_passed, l.suite_digest, l.router_version, l.started_at, l.finished_at,
			` + digestSQL("l", "prompt_digest") + `, ` + digestSQL("l", "target_digest") + `, l.legacy,
			p.finished_at,
			(extract(epoch FROM now() - p.finished_at) * 1000000)::bigint,
			` + freshSQL("p.finished_at", "$4") + `,
			coalesce((WITH RECURSIVE v AS (
			    (SELECT o.prompt_version FROM conformance_runs o WHERE o.provider = $1 AND o.prompt = $2 AND o.passed
			     ORDER BY o.prompt_version LIMIT 1)
			    UNION ALL
			    SELECT n.prompt_version FROM v, LATERAL (
			      SELECT o.prompt_version FROM conformance_runs o
			      WHERE o.provider = $1 AND o.prompt = $2 AND o.passed AND o.prompt_version > v.prompt_version
			      ORDER BY o.prompt_version LIMIT 1) n)
			  SELECT array_agg(v.prompt_version ORDER BY v.prompt_version) FROM v
			  WHERE v.prompt_version <> $3` + versionOfModel + `), '{}'),
			coalesce((WITH RECURSIVE m AS (
			    (SELECT o.model FROM conformance_runs o WHERE $5 <> '' AND o.provider = $1 AND o.passed
			     ORDER BY o.model LIMIT 1)
			    UNION ALL
			    SELECT n.model FROM m, LATERAL (
			      SELECT o.model FROM conformance_runs o WHERE o.provider = $1 AND o.passed AND o.model > m.model
			      ORDER BY o.model LIMIT 1) n)
			  SELECT array_agg(m.model ORDER BY x.last DESC, m.model) FROM m
			  CROSS JOIN LATERAL (
			    SELECT o.finished_at AS last FROM conformance_runs o
			    WHERE o.provider = $1 AND o.model = m.model AND o.prompt = $2 AND o.prompt_version = $3 AND o.passed
			    ORDER BY o.finished_at DESC LIMIT 1) x
			  WHERE m.model <> $5), '{}')
		FROM (SELECT 1) AS one
		LEFT JOIN LATERAL (
			SELECT id, passed, started_at FROM conformance_runs
			WHERE provider = $1 AND prompt = $2 AND prompt_version = $3` + model + `
			ORDER BY finished_at DESC, id DESC LIMIT 1) t ON true
		LEFT JOIN LATERAL (
			SELECT id FROM conformance_runs
			WHERE provider = $1 AND prompt = $2 AND prompt_version = $3` + model + ` AND ` + overlappingFailureSQL("t", "conformance_runs") + `
			ORDER BY finished_at DESC, id DESC LIMIT 1) f ON true
		LEFT JOIN conformance_runs l ON l.id = coalesce(f.id, t.id)
		LEFT JOIN LATERAL (
			SELECT finished_at FROM conformance_runs
			WHERE provider = $1 AND prompt = $2 AND prompt_version = $3 AND passed` + model + `
			ORDER BY finished_at DESC LIMIT 1) p ON true`
}

// overlappingFailureSQL is the condition on a run of table (an alias) of the
// same group as the run t that finished last: t passed, and this run failed
// and finished after t started. Such a failure is the group's latest run in
// t's stead: a pass is not counted when a run that tested the target while it
// ran failed. Ordered by finished_at DESC, the first such run is served by
// the group's latest-run index (a range scan over the runs that finished
// while t ran).
func overlappingFailureSQL(t, table string) string {
	return t + ".passed AND NOT " + table + ".passed AND " + table + ".finished_at > " + t + ".started_at AND " + table + ".id <> " + t + ".id"
}
