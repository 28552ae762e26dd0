package api

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/routerhq/router/internal/chat"
	rfcproblem "github.com/routerhq/router/internal/problem"
	"github.com/routerhq/router/internal/store"
)

// listStates are the values of GET /v1/jobs's state filter: every job state.
var listStates = []string{store.JobPending, store.JobRunning, store.JobSucceeded, store.JobFailed, store.JobCancelled, store.JobUnknown}

// listParamAliases are names other APIs give GET /v1/jobs's parameters (or
// its answer's next_cursor), each with the parameter meant: a "did you mean"
// that spelling distance alone would not find.
var listParamAliases = map[string]string{
	"status": "state", "op": "operation", "next_cursor": "cursor", "page_size": "limit", "per_page": "limit",
}

// listParamHint is the parameter an unknown query parameter name was likely
// meant to be ("" when none): an alias, the same name in another case, or a
// near miss (nearMiss, as for chat members).
func listParamHint(name string) string {
	if p, ok := listParamAliases[strings.ToLower(name)]; ok {
		return p
	}
	for _, p := range listParams {
		if strings.EqualFold(name, p) || nearMiss(name, p) > 0 {
			return p
		}
	}
	return ""
}

// unknownStateDetail says why state v is refused: it is no job state, so
// the listing could only be empty.
func unknownStateDetail(v string) string {
	hint := ""
	for _, st := range listStates {
		if strings.EqualFold(v, st) || nearMiss(v, st) > 0 {
			hint = fmt.Sprintf("did you mean %s? ", st)
			break
		}
	}
	return fmt.Sprintf("state %s is not a job state, so no job could match; %sstate must be one of %s, "+
		"or left out to list every state", strconv.Quote(rfcproblem.Clip(v)), hint, strings.Join(listStates, ", "))
}

// knownOperations are the operations of the jobs this replica creates,
// sorted: each loaded prompt's name, and chat:<route> for each route (chat
// completions). Jobs may have others: a prompt retired since, or loaded by
// another replica, a route another replica serves.
func (s *Server) knownOperations() []string {
	var ops []string
	if s.Prompts != nil {
		for _, p := range s.Prompts.All() {
			ops = append(ops, p.Name)
		}
	}
	for r := range s.Routes {
		ops = append(ops, chat.Operation(r))
	}
	slices.Sort(ops)
	return slices.Compact(ops)
}

// maxListedOperations is how many operations a rejection of an unknown one
// lists at most.
const maxListedOperations = 20

// unknownOperationDetail says why operation op, which this replica does not
// run (known) and which none of the caller's jobs within the listing's
// bounds has, is refused, with the operation it was likely meant to be.
func unknownOperationDetail(op string, known []string) string {
	var hint string
	switch {
	case strings.TrimSuffix(op, ":") == strings.TrimSuffix(chat.OperationPrefix, ":"):
		hint = "chat completion jobs have the operation " + chat.OperationPrefix + "<route>"
		if c := chatOperations(known); len(c) > 0 {
			hint += ", here " + strings.Join(c, ", ")
		}
		hint += "; "
	case slices.Contains(known, chat.Operation(op)):
		hint = fmt.Sprintf("did you mean %s (chat completions of route %s)? ", chat.Operation(op), op)
	default:
		for _, k := range known {
			if strings.EqualFold(op, k) || nearMiss(op, k) > 0 {
				hint = fmt.Sprintf("did you mean %s? ", k)
				break
			}
		}
	}
	list := "none"
	if len(known) > 0 {
		shown := known[:min(len(known), maxListedOperations)]
		list = strings.Join(shown, ", ")
		if n := len(known) - len(shown); n > 0 {
			list += fmt.Sprintf(" and %d more", n)
		}
	}
	return fmt.Sprintf("operation %s is not an operation this router runs, and none of your jobs has it, so the listing "+
		"could only be empty; %sthe operations are a prompt's name or %s<route>: %s. "+
		"Correct the name, or leave operation out to list every operation",
		strconv.Quote(rfcproblem.Clip(op)), hint, chat.OperationPrefix, list)
}

// chatOperations are the chat operations among ops.
func chatOperations(ops []string) []string {
	var c []string
	for _, op := range ops {
		if _, ok := chat.Route(op); ok {
			c = append(c, op)
		}
	}
	return c
}
