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

// gatedNote says what the conformance gate did to the targets it kept out
// of the job's round, and how to join it to the advice to start a new
// round: next_step's words, and a failed chat call's (chatFailure;
// race.GatedNote). note is "" when the gate refused nothing.
func gatedNote(job *store.Job) (note, then string) { return race.GatedNote(job) }
