package server

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/prompt"
)

// checkPrompts refuses, in one message listing every problem (SPEC §15), a
// prompt whose route the configuration does not define and a route whose
// conformance_prompt is not loaded. The tenant API still refuses a job naming
// an unknown route (422 unknown-route); this makes a prompt whose own route is
// missing a startup error rather than a refusal of each of its jobs.
func checkPrompts(cfg *config.Config, prompts *prompt.Set) error {
	routes := make([]string, 0, len(cfg.Routes))
	for name := range cfg.Routes {
		routes = append(routes, name)
	}
	slices.Sort(routes)
	var lines []string
	for _, p := range prompts.RouteProblems(routes) {
		lines = append(lines, p.String())
	}
	for _, name := range routes {
		r := cfg.Routes[name]
		if r == nil || r.ConformancePrompt == "" {
			continue
		}
		if _, err := prompts.Get(r.ConformancePrompt, ""); err != nil {
			lines = append(lines, fmt.Sprintf("routes.%s.conformance_prompt: %v", name, err))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return errors.New("prompts and routes do not match:\n  " + strings.Join(lines, "\n  "))
}
