package prompt

import (
	"fmt"
	"slices"
	"strings"
)

// RouteProblems names every prompt whose route (the one a job that names
// none runs on; "default" when the manifest sets none) is not among routes,
// the routes the configuration defines: one Problem per prompt, in name
// order. A job may still name another route; the prompt's own must exist, or
// every job relying on it would be refused.
func (s *Set) RouteProblems(routes []string) []Problem {
	have := "none"
	if len(routes) > 0 {
		have = strings.Join(slices.Sorted(slices.Values(routes)), ", ")
	}
	var problems []Problem
	for _, p := range s.all {
		if slices.Contains(routes, p.Route) {
			continue
		}
		problems = append(problems, Problem{File: p.File, Field: "route", Message: fmt.Sprintf(
			"prompt %q uses route %q, which the configuration does not define (configured routes: %s); set route in the manifest to one of them, or add routes.%s to the configuration",
			p.Name, p.Route, have, p.Route)})
	}
	return problems
}
