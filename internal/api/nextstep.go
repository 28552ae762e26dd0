package api

import (
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// appendJob appends the job resource as /v1/jobs answers it: store.Job's
// JSON, and for a failed job a last member "next_step" (race.NextStep)
// saying that the job has ended and how to run it again — the job as its
// job.failed webhook event and `router jobs get` show it too
// (race.AppendJob). Jobs in other states are written exactly as stored.
func appendJob(b []byte, job *store.Job) []byte { return race.AppendJob(b, job) }

// gatedTargets is each target of the job's routing that the conformance gate
// refused (a decision of cause race.CauseConformanceGate) and that this
// round never tried, as "<target>: <the gate's reason>" (race.GatedTargets).
func gatedTargets(job *store.Job) []string { return race.GatedTargets(job) }

// gatedSkipped says that the conformance gate skipped the targets gated and
// that a retry now would be gated the same way: next_step's words, and a
// failed chat call's (chatFailure; race.GatedSkipped).
func gatedSkipped(gated []string) string { return race.GatedSkipped(gated) }

// onceTheyPass joins gatedSkipped to the advice to start a new round.
const onceTheyPass = race.OnceTheyPass
