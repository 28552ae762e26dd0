// Package e2e holds tests that run the router binary as separate processes on one
// database: crash recovery (SIGKILL mid-attempt) and several replicas sharing the
// work. It has no production code.
package e2e
