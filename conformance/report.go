package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// maxFailuresShown bounds the failures printed per case in the table.
const maxFailuresShown = 3

// WriteTable prints the report as a table: one row per provider × prompt
// version, each failing case under its row with the rule and path of every
// failure, then a summary line (for an interrupted run, how many of the
// planned results finished).
func (r *Report) WriteTable(w io.Writer) error {
	header := []string{"PROVIDER", "MODEL", "PROMPT", "CASES", "RESULT"}
	rows := make([][]string, len(r.Results))
	for i, res := range r.Results {
		verdict := "pass"
		switch {
		case res.Inconclusive:
			verdict = "INCONCLUSIVE: rerun (transient provider errors; not recorded)"
		case !res.Passed:
			verdict = "FAIL"
		}
		if res.Interrupted {
			verdict += fmt.Sprintf(" (interrupted after %d of %d cases)", len(res.Cases), res.CasesTotal)
		}
		if res.Exploratory {
			verdict += fmt.Sprintf(", EXPLORATORY (temperature %g; not recorded)", res.Temperature)
		}
		if res.NotRecorded() {
			verdict += ", NOT RECORDED"
		}
		rows[i] = []string{printable(res.Provider), printable(res.Model), printable(res.ID()), fmt.Sprintf("%d/%d", res.CasesPassed, res.CasesTotal), verdict}
	}
	width := make([]int, len(header))
	for _, row := range append([][]string{header}, rows...) {
		for j, cell := range row {
			width[j] = max(width[j], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	line := func(row []string) {
		for j, cell := range row {
			if j == len(row)-1 {
				b.WriteString(cell)
				break
			}
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", width[j]-utf8.RuneCountInString(cell)+2))
		}
		b.WriteByte('\n')
	}
	line(header)
	// failed counts the failures the gate has (or, when the run records
	// nothing, would have): a failure not recorded, or an inconclusive
	// result, withdraws nothing.
	failed, unrecorded, cut, unsure, explored := 0, 0, 0, 0, 0
	for i, res := range r.Results {
		line(rows[i])
		if res.Exploratory {
			explored++
		}
		if res.Interrupted {
			cut++
		}
		if res.NotRecorded() {
			unrecorded++
			b.WriteString("    ✗ not recorded: " + shorten(res.RecordError, 160) + "\n")
		}
		if res.Passed {
			continue
		}
		switch {
		case res.Inconclusive:
			unsure++
		case !res.NotRecorded() && !res.Exploratory:
			failed++
		}
		for _, c := range res.Cases {
			if !c.Passed {
				b.WriteString("    ✗ " + describeCase(c) + "\n")
			}
		}
	}
	for _, id := range r.Unsuited {
		name, _, _ := strings.Cut(id, "@")
		where := name + "/" + SuiteFile
		if r.SuitesDir != "" {
			where = filepath.Join(r.SuitesDir, name, SuiteFile)
		}
		unsuited := r.unsuitedMeans()
		fmt.Fprintf(&b, "prompt %s has no suite (%s): %s\n", printable(id), printable(where), unsuited)
	}
	switch {
	case r.Interrupted:
		// Not "all passed", nor "nothing to run": what did not finish was
		// neither tested nor recorded.
		// A result cut short after a failed case (Result.Interrupted) did
		// not finish, but its failure is recorded.
		more := ""
		if cut > 0 {
			more = fmt.Sprintf(", and %d more stopped early after a case failed (recorded as failed)", cut)
		}
		fmt.Fprintf(&b, "interrupted: %d of %d planned results finished%s; the rest were not run or recorded, so the gate still judges those providers by their previous runs\n",
			len(r.Results)-cut, r.Planned, more)
		if failed > 0 {
			fmt.Fprintf(&b, "%d of the %d results above failed: %s\n", failed, len(r.Results), r.failedMeans("those providers", "those prompt versions"))
		}
	case len(r.Results) == 0 && len(r.Unsuited) == 0:
		b.WriteString("nothing to run: no prompt has a suite\n")
	case r.Passed:
		fmt.Fprintf(&b, "all %d passed\n", len(r.Results))
	case explored == len(r.Results) && len(r.Unsuited) == 0 && unrecorded == 0:
		// Said below.
	case failed > 0:
		fmt.Fprintf(&b, "%d of %d failed: %s\n", failed, len(r.Results), r.failedMeans("those providers", "those prompt versions"))
	}
	if unsure > 0 {
		fmt.Fprintf(&b, "%d of %d inconclusive: %s\n", unsure, len(r.Results), printable(r.inconclusiveMeans()))
	}
	if explored > 0 {
		fmt.Fprintf(&b, "%d of %d exploratory: %s\n", explored, len(r.Results), exploratoryMeans())
	}
	if unrecorded > 0 {
		fmt.Fprintf(&b, "%d of %d not recorded: the gate does not have these results and still judges those providers by their previous runs; run again once the database takes them\n",
			unrecorded, len(r.Results))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Consequence says, for a report that did not pass, what it means for
// routing under the configured gate (Report.Gate), in the words `router
// conformance run` ends with: one sentence for each consequence present,
// as the table says them, joined by "; " — the failures ("the providers
// marked FAIL are not eligible for failover or hedging on those prompt
// versions until a run passes"), then the prompts without a suite, then the
// inconclusive and the exploratory results. With the gate off, that the
// results are not used for routing.
func (r *Report) Consequence() string {
	failed, unsure, explored := 0, 0, 0
	for _, res := range r.Results {
		switch {
		case res.Exploratory:
			explored++
		case res.Inconclusive:
			unsure++
		case !res.Passed:
			failed++
		}
	}
	var parts []string
	// Each later part names itself as some of the results, once another
	// has been said.
	some := func(kind, means string) string {
		if len(parts) == 0 {
			return kind + ": " + means
		}
		return "some results are " + kind + ": " + means
	}
	if failed > 0 {
		parts = append(parts, r.failedMeansUntil("the providers marked FAIL", "those prompt versions", " until a run passes"))
	}
	if len(r.Unsuited) > 0 {
		switch {
		case r.Gate == GateOff && failed > 0:
			parts = append(parts, "some prompts have no suite")
		case r.Gate == GateOff:
			parts = append(parts, "some prompts have no suite; conformance.gate is off, so routing does not use conformance results yet")
		case r.Gate == GateAll:
			parts = append(parts, "some prompts have no suite: no target is eligible for any attempt on them, not even as a route's primary (conformance.gate: all), so every job of them is refused")
		default:
			parts = append(parts, "some prompts have no suite: no provider is eligible for failover or hedging on them")
		}
	}
	if unsure > 0 {
		parts = append(parts, some("inconclusive", r.inconclusiveMeans()))
	}
	if explored > 0 {
		parts = append(parts, some("exploratory", exploratoryMeans()))
	}
	if len(parts) == 0 {
		return r.failedMeansUntil("the providers marked FAIL", "those prompt versions", " until a run passes")
	}
	return strings.Join(parts, "; ")
}

// unsuitedMeans is what a prompt without a suite means under the report's
// gate.
func (r *Report) unsuitedMeans() string {
	switch r.Gate {
	case GateOff:
		return "no provider could pass the gate on it, were conformance.gate turned on"
	case GateAll:
		return "no target is eligible for any attempt on it, not even as a route's primary (conformance.gate: all): every job of it is refused"
	}
	return "no provider can become eligible for failover on it"
}

// failedMeans is what failing means for who on what under the report's gate.
func (r *Report) failedMeans(who, what string) string {
	return r.failedMeansUntil(who, what, "")
}

// failedMeansUntil is failedMeans with until (" until a run passes", or "")
// said of how long who stays out, where the gate keeps it out.
func (r *Report) failedMeansUntil(who, what, until string) string {
	switch r.Gate {
	case GateOff:
		return "conformance.gate is off, so routing does not use these results: " + who + " still take failover and hedge traffic " +
			"(set conformance.gate to fallbacks to keep them out)"
	case GateFallbacks, "":
		return who + " are not eligible for failover or hedging on " + what + until
	}
	return who + " are not eligible for any attempt on " + what + until + ", not even as a route's primary (conformance.gate: all)"
}

// WriteJSON prints the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// describeCase is one failing case on one line: the first failure with its
// message, the rule and path of a few more, and how many were left out.
func describeCase(c CaseResult) string {
	name := printable(c.Name)
	if len(c.Failures) == 0 {
		return name + ": failed at " + printable(c.Stage)
	}
	f := c.Failures[0]
	s := fmt.Sprintf("%s: %s at %s: %s", name, printable(f.Rule), printable(f.Path), shorten(f.Message, 120))
	rest := c.Failures[1:]
	var also []string
	for i, f := range rest {
		if i == maxFailuresShown {
			also = append(also, fmt.Sprintf("%d more", len(rest)-i))
			break
		}
		also = append(also, printable(f.Rule)+" at "+printable(f.Path))
	}
	if len(also) > 0 {
		s += "; also " + strings.Join(also, ", ")
	}
	return s
}

// shorten puts s on one line (runs of white space become one space), made
// printable, of at most n characters.
func shorten(s string, n int) string {
	s = printable(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// ProgressLine writes progress on one terminal line, overwritten each time;
// Done clears it. For terminals only: callers check that the writer is one.
type ProgressLine struct {
	W io.Writer
}

// Update shows one finished case.
func (p *ProgressLine) Update(pr Progress) {
	mark := "✓"
	if !pr.Passed {
		mark = "✗"
	}
	who := printable(pr.Provider)
	if pr.Model != "" { // one provider may run a prompt with several models (a chat route's aliases)
		who += " " + printable(pr.Model)
	}
	fmt.Fprintf(p.W, "\r\033[Kconformance %d/%d  %s %s %s %s", pr.Done, pr.Total, mark, who, printable(pr.Prompt), shorten(pr.Case, 40))
}

// Done clears the line.
func (p *ProgressLine) Done() { fmt.Fprint(p.W, "\r\033[K") }

// printable makes text for the terminal harmless: a provider's error body, a
// key of a model's reply (in a path) or a suite's case name may hold escape
// sequences or other control characters that would act on the operator's
// terminal (retitle it, clear it, rewrite a line, reorder it with a bidi
// override). Each such character is shown escaped instead, as \x1b or \u202e,
// and a byte that is not UTF-8 as \xff. The JSON report needs none of this.
func printable(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || control(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case control(r) && r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		case control(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// control: C0 and C1 control characters, DEL and the bidi controls.
func control(r rune) bool {
	return r < 0x20 || r >= 0x7f && r < 0xa0 ||
		r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}
