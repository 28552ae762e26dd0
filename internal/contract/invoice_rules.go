package contract

import (
	"fmt"
	"time"
)

// Go rules shipped with the router for its example prompts.
func init() {
	Register("invoice.dates_ordered", invoiceDatesOrdered)
}

// invoiceDatesOrdered requires due_date (YYYY-MM-DD) to be on or after
// issue_date. Missing or malformed dates are left to the schema.
func invoiceDatesOrdered(doc any) []Violation {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	issue, ok1 := parseDate(m["issue_date"])
	due, ok2 := parseDate(m["due_date"])
	if !ok1 || !ok2 || !due.Before(issue) {
		return nil
	}
	return []Violation{{
		Path:    "/due_date",
		Message: fmt.Sprintf("due_date %s is before issue_date %s", due.Format(time.DateOnly), issue.Format(time.DateOnly)),
	}}
}

func parseDate(v any) (time.Time, bool) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.DateOnly, s)
	return t, err == nil
}
