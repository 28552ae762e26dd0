// Package webhook delivers job completion events (SPEC §16) to owners'
// webhooks. The events are written by the database itself (the jobs_outbox
// trigger of migration 0006) in the transaction that changes a job's state,
// together with a River job that asks for their delivery; this package holds
// the River worker that sends them, signed per Standard Webhooks (Sign,
// Verify), the retry policy, and the River client's start and stop.
//
// It must not change jobs: it only reads them and records delivery tries.
package webhook
