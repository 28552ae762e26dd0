// Package contract owns judging one model output: is it JSON, does it match the
// prompt's JSON Schema, and does it keep the prompt's business contract.
//
// Validation has two stages and an output must pass both to win a job:
//
//  1. JSON Schema (github.com/santhosh-tekuri/jsonschema/v5, draft 2020-12 unless
//     the schema says otherwise, "format" asserted, except "regex", an annotation:
//     see schemaregex.go). Every leaf failure is reported
//     (up to MaxViolations, see below).
//  2. The business contract: declarative Rules (no undeclared top-level keys, enums,
//     ranges, cross-field equalities, per-item products, sums) and Go rules
//     registered by name with Register. Stage 2 runs only when stage 1 passed, so a
//     broken shape is reported once, by the schema, not again by every rule that
//     reads it.
//
// Every failure is a Violation naming the rule and the JSON path (a JSON pointer
// such as /line_items/2/amount, or $ for the whole document). A list is cut at
// MaxViolations (an output of a few MiB can fail millions of times, and the
// list is stored and served): the first ones are kept and one last violation,
// rule RuleTruncated, says how many more there were.
//
// The package must not call providers or touch the database: it only judges bytes
// it is given. A Validator is immutable after NewValidator and safe for concurrent
// use.
package contract
