package telemetry

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The OpenTelemetry SDK reads the sampler (OTEL_TRACES_SAMPLER,
// OTEL_TRACES_SAMPLER_ARG) and the batch span processor's settings
// (OTEL_BSP_*) itself, and what it cannot read it replaces without a word
// on the router's log: an unknown sampler or an unreadable ratio by a
// sampler that keeps every trace (an operator who asked for a tenth exports
// all of them), an unreadable OTEL_BSP_* by its default (reported only on
// OpenTelemetry's internal logger, silent by default). sdkEnvWarnings reads
// them as the SDK does, beforehand, and SetupLogged warns of each on the
// router's log, as it does of an unreadable value length limit.

// samplers are the OTEL_TRACES_SAMPLER values the SDK knows.
var samplers = [...]string{"always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"}

// samplerProblem is what the SDK makes of an OTEL_TRACES_SAMPLER or
// OTEL_TRACES_SAMPLER_ARG it cannot read ("" when it reads them): msg, the
// warning, names the variable, the sampler used instead and how to write it;
// key and value are the variable and what it holds. The SDK reads them as
// samplerFromEnv in go.opentelemetry.io/otel/sdk/trace does: the sampler's
// name ignoring case and surrounding spaces, the argument without them.
func samplerProblem(getenv func(string) string) (msg, key, value string) {
	const samplerKey, argKey = "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG"
	sampler := enumValue(getenv, samplerKey)
	arg := strings.TrimSpace(getenv(argKey))
	switch sampler {
	case "":
		if arg != "" {
			return argKey + " is set but OTEL_TRACES_SAMPLER is not, so it is ignored: every trace whose caller did not say otherwise is sampled (parentbased_always_on, the default); set OTEL_TRACES_SAMPLER=parentbased_traceidratio (or traceidratio) beside it",
				argKey, arg
		}
		return "", "", ""
	case "traceidratio", "parentbased_traceidratio":
		if arg == "" {
			return "", "", ""
		}
		v, err := strconv.ParseFloat(arg, 64)
		if err == nil && v >= 0 && v <= 1 { // NaN, which the SDK takes and then samples every trace with, does not
			return "", "", ""
		}
		used := "every trace, whatever its caller's sampled flag (traceidratio with ratio 1)"
		if sampler == "parentbased_traceidratio" {
			used = "every trace whose caller did not say otherwise (parentbased_traceidratio with ratio 1)"
		}
		return argKey + " is not a ratio from 0 to 1, so OpenTelemetry samples " + used + "; write the fraction of traces to sample as a decimal number (0.1 for a tenth)",
			argKey, arg
	}
	for _, s := range samplers {
		if sampler == s {
			return "", "", ""
		}
	}
	return samplerKey + " is not a sampler OpenTelemetry knows, so it samples every trace whose caller did not say otherwise (parentbased_always_on, the default); write one of " + strings.Join(samplers[:], ", "),
		samplerKey, strings.TrimSpace(getenv(samplerKey))
}

// bspVar is an integer variable of the batch span processor, its default
// (the SDK's) and its unit.
type bspVar struct {
	key  string
	def  int
	unit string // "ms" or "spans"
	// min is the least value the SDK can run with: below it a size panics
	// (a negative channel or slice capacity) or drops every span (a queue
	// of 0), a schedule delay of 0 or less spins a core. The export timeout
	// has none: 0 or less means no timeout, as the SDK reads it.
	min int
}

// bspVars are the OTEL_BSP_* variables the SDK reads (NewBatchSpanProcessor).
var bspVars = [...]bspVar{
	{"OTEL_BSP_SCHEDULE_DELAY", 5000, "ms", 1},
	{"OTEL_BSP_EXPORT_TIMEOUT", 30000, "ms", math.MinInt},
	{"OTEL_BSP_MAX_QUEUE_SIZE", 2048, "spans", 1},
	{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, "spans", 1},
}

// bspProblems refuses an OTEL_BSP_* integer the batch span processor cannot
// run with (bspVar.min): OTEL_BSP_MAX_QUEUE_SIZE=-1 made serve panic at
// start inside the SDK, and OTEL_BSP_SCHEDULE_DELAY=0 spun a core, while
// config check passed both (found in review). A value that is not an
// integer is not refused: the SDK keeps its default (sdkEnvWarnings).
func bspProblems(getenv func(string) string) error {
	var errs []error
	for _, b := range bspVars {
		raw := getenv(b.key)
		n, err := strconv.Atoi(raw)
		if raw == "" || err != nil || n >= b.min {
			continue
		}
		errs = append(errs, fmt.Errorf("%s=%s: the batch span processor needs at least %d %s (its default is %d); set a larger value or unset it",
			b.key, raw, b.min, b.unit, b.def))
	}
	return errors.Join(errs...)
}

// sdkEnvWarnings are the warnings of each sampler or batch span processor
// variable the SDK cannot read (samplerProblem; an OTEL_BSP_* that is not an
// integer, read as the SDK reads it: strconv.Atoi of the value as it is,
// spaces included), naming the variable, what it holds, what is used instead
// and how to write it.
func sdkEnvWarnings(getenv func(string) string) []Warning {
	var warnings []Warning
	if msg, key, value := samplerProblem(getenv); msg != "" {
		warnings = append(warnings, Warning{Msg: msg, Attrs: []any{"variable", key, "value", value}})
	}
	for _, b := range bspVars {
		raw := getenv(b.key)
		if raw == "" {
			continue
		}
		if _, err := strconv.Atoi(raw); err == nil {
			continue
		}
		how := "write a whole number of spans"
		if b.unit == "ms" {
			how = "write a whole number of milliseconds, without a unit"
			if d, err := time.ParseDuration(strings.TrimSpace(raw)); err == nil {
				how += " (" + strconv.FormatInt(d.Milliseconds(), 10) + " for " + strings.TrimSpace(raw) + ")"
			}
		}
		warnings = append(warnings, Warning{Msg: b.key + " is not an integer, so the batch span processor keeps its default; " + how,
			Attrs: []any{"variable", b.key, "value", raw, "default", strconv.Itoa(b.def) + " " + b.unit}})
	}
	return warnings
}
