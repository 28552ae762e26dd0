// Package chaos owns the fault-injection run (SPEC §17, issue 13 item 4) and its
// history checker.
//
// The run (chaos_test.go) starts a private PostgreSQL cluster, three `router
// serve` processes on it and two OpenAI-compatible fake providers, drives steady,
// bounded load through the public HTTP API with clients that retry like real
// ones, and injects faults in turn: a replica is SIGKILLed and restarted,
// PostgreSQL is restarted (immediate shutdown), a provider drops connections, a
// provider hangs. `make test` runs a short form; `make chaos` runs it for
// CHAOS_DURATION.
//
// The history checker (Check) then reads only the tables jobs, attempts and
// idempotency_keys, plus the audit table its trigger fills (InstallAudit), and
// reports every violation of the guarantees of SPEC §3, §5 and §6 it can see.
// It knows nothing of the router's code, so it can judge any history.
package chaos
