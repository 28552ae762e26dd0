package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// attemptSeqs lists the seqs of job jobID's attempts in one of states, in
// order: what a message names so that its reader can act on each.
func attemptSeqs(ctx context.Context, tx pgx.Tx, jobID string, states ...string) ([]int, error) {
	rows, err := tx.Query(ctx, `SELECT seq FROM attempts WHERE job_id = $1 AND state = ANY($2) ORDER BY seq`, jobID, states)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int])
}

// resolveHint says how to resolve job jobID's unknown attempts seqs: the
// request, with the job's id and each attempt's seq filled in.
func resolveHint(jobID string, seqs []int) string {
	switch len(seqs) {
	case 0:
		return "Resolve its unknown attempt with POST /v1/jobs/" + jobID + "/attempts/{seq}/resolve (GET /v1/jobs/" + jobID + " lists them)"
	case 1:
		return "Resolve it with POST /v1/jobs/" + jobID + "/attempts/" + strconv.Itoa(seqs[0]) + "/resolve"
	}
	return fmt.Sprintf("Resolve each with POST /v1/jobs/%s/attempts/{seq}/resolve, {seq} being %s", jobID, seqWords(seqs))
}

// resolveBeforeRetry says, in one sentence, why job jobID cannot be retried
// while its attempts seqs are unknown and what to do: "attempt 2 is unknown;
// resolve it with POST /v1/jobs/{id}/attempts/2/resolve, then retry the job".
func resolveBeforeRetry(jobID string, seqs []int) string {
	hint := resolveHint(jobID, seqs)
	return isAre(seqs) + " unknown; " + strings.ToLower(hint[:1]) + hint[1:] + ", then retry the job"
}

// seqWords is "2", "2 and 3", "2, 3 and 5".
func seqWords(seqs []int) string {
	s := make([]string, len(seqs))
	for i, n := range seqs {
		s[i] = strconv.Itoa(n)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// attemptsWord is "attempt 2" or "attempts 2 and 3" ("an attempt" for none
// listed).
func attemptsWord(seqs []int) string {
	switch len(seqs) {
	case 0:
		return "an attempt"
	case 1:
		return "attempt " + seqWords(seqs)
	}
	return "attempts " + seqWords(seqs)
}

// isAre is "attempt 2 is" or "attempts 2 and 3 are".
func isAre(seqs []int) string {
	if len(seqs) > 1 {
		return attemptsWord(seqs) + " are"
	}
	return attemptsWord(seqs) + " is"
}
