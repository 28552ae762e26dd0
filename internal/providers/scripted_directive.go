package providers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DirectivePrefix starts a scripted directive line in the last user message.
const DirectivePrefix = "#scripted:"

// directiveStep applies to base the `#scripted:` lines of the last user message,
// and the `#scripted@<name>:` lines addressed to the provider called name.
// ok=false when there are none. With peers (ScriptedConfig.Peers), a line
// addressed to a name that is none of them is an error.
func directiveStep(req *Request, name string, peers []string, base Step) (st Step, ok bool, err error) {
	msg, found := lastUserMessage(req)
	if !found {
		return base, false, nil
	}
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		rest, isDirective := strings.CutPrefix(line, DirectivePrefix)
		if !isDirective {
			target, r, addressed := strings.Cut(strings.TrimPrefix(line, "#scripted@"), ":")
			if !strings.HasPrefix(line, "#scripted@") || !addressed {
				continue
			}
			if target != name {
				if peers != nil && !slices.Contains(peers, target) {
					return Step{}, true, fmt.Errorf("scripted directive addressed to %q: no scripted provider is called that (the scripted providers are %s): "+
						"write one of those names after #scripted@, or %s for every scripted provider", target, strings.Join(peers, ", "), DirectivePrefix)
				}
				continue
			}
			rest = r
		}
		ok = true
		if err := parseDirective(rest, &st); err != nil {
			return Step{}, true, err
		}
	}
	if !ok {
		return base, false, nil
	}
	return overlay(base, st), true, nil
}

// overlay applies directives d to the scripted step base: a directive that
// names an outcome (output, status, error, hang, cut, stall, malformed)
// replaces the scripted outcome; latency, model and retry_after adjust it.
func overlay(base, d Step) Step {
	out := base
	if d.Output != "" || d.Status != 0 || d.Error != nil || d.Hang || d.StreamCut || d.StreamStall || d.StreamMalformed {
		out.Output, out.Status, out.Error = d.Output, d.Status, d.Error
		out.Hang, out.StreamCut, out.StreamStall, out.StreamMalformed = d.Hang, d.StreamCut, d.StreamStall, d.StreamMalformed
		if d.Output == "" {
			out.Output = base.Output // a stream failure delivers half of the scripted answer
		}
	}
	if d.Latency != 0 {
		out.Latency = d.Latency
	}
	if d.Model != "" {
		out.Model = d.Model
	}
	if d.RetryAfter != 0 {
		out.RetryAfter = d.RetryAfter
	}
	return out
}

func lastUserMessage(req *Request) (string, bool) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content, true
		}
	}
	return "", false
}

// parseDirective applies one directive line (without the prefix) to st.
func parseDirective(s string, st *Step) error {
	for s = strings.TrimSpace(s); s != ""; {
		if out, isOutput := strings.CutPrefix(s, "output="); isOutput {
			st.Output = out // the rest of the line, spaces included
			return nil
		}
		tok, rest := s, ""
		if i := strings.IndexAny(s, " \t"); i >= 0 {
			tok, rest = s[:i], s[i+1:]
		}
		if err := applyDirective(tok, st); err != nil {
			return fmt.Errorf("scripted directive %q: %w (syntax: %s status=<code> retry_after=<dur> latency=<dur> hang cut stall malformed model=<name> error=<kind> output=<rest of line>)", tok, err, DirectivePrefix)
		}
		s = strings.TrimSpace(rest)
	}
	return nil
}

func applyDirective(tok string, st *Step) error {
	key, val, hasVal := strings.Cut(tok, "=")
	flag := func(p *bool) error {
		if hasVal {
			return fmt.Errorf("%s takes no value", key)
		}
		*p = true
		return nil
	}
	switch key {
	case "hang":
		return flag(&st.Hang)
	case "cut":
		return flag(&st.StreamCut)
	case "stall":
		return flag(&st.StreamStall)
	case "malformed":
		return flag(&st.StreamMalformed)
	case "status":
		n, err := strconv.Atoi(val)
		if err != nil || n < 100 || n > 599 {
			return fmt.Errorf("status wants an HTTP status code, got %q", val)
		}
		st.Status = n
	case "latency":
		d, err := time.ParseDuration(val)
		if err != nil || d < 0 {
			return fmt.Errorf("latency wants a duration like 300ms, got %q", val)
		}
		st.Latency = d
	case "retry_after":
		d, err := time.ParseDuration(val)
		if err != nil {
			secs, serr := strconv.Atoi(val)
			if serr != nil {
				return fmt.Errorf("retry_after wants a duration like 2s or seconds, got %q", val)
			}
			d = time.Duration(secs) * time.Second
		}
		if d < 0 {
			return fmt.Errorf("retry_after must not be negative, got %q", val)
		}
		st.RetryAfter = d
	case "model":
		if val == "" {
			return fmt.Errorf("model wants a name")
		}
		st.Model = val
	case "error":
		if !KnownKind(Kind(val)) {
			return fmt.Errorf("error wants a taxonomy kind such as server_error or content_policy, got %q", val)
		}
		st.Error = NewError("", Kind(val), "scripted "+val)
	default:
		return fmt.Errorf("unknown directive")
	}
	return nil
}
