package telemetry

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// sdkEnvWarnings warn (SetupLogged logs them), naming the variable, what it holds, what is used instead
// and how to write it, of each sampler or OTEL_BSP_* value the SDK cannot
// read, and of nothing it reads.
func TestSDKEnvWarnings(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string // substrings of the log; none: no warning
	}{
		{"nothing set", nil, nil},
		{"a ratio", map[string]string{"OTEL_TRACES_SAMPLER": "ParentBased_TraceIDRatio ", "OTEL_TRACES_SAMPLER_ARG": " 0.1"}, nil},
		{"a known sampler", map[string]string{"OTEL_TRACES_SAMPLER": "always_off"}, nil},
		{"readable BSP", map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "1000", "OTEL_BSP_MAX_QUEUE_SIZE": "4096"}, nil},
		{"a percentage", map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "10%"},
			[]string{"level=WARN", "OTEL_TRACES_SAMPLER_ARG is not a ratio from 0 to 1", "samples every trace, whatever its caller's sampled flag", "0.1 for a tenth", "value=10%"}},
		{"a ratio above 1", map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "10"},
			[]string{"every trace whose caller did not say otherwise (parentbased_traceidratio with ratio 1)", "value=10"}},
		{"not a number", map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "NaN"},
			[]string{"OTEL_TRACES_SAMPLER_ARG is not a ratio from 0 to 1", "value=NaN"}},
		{"an unknown sampler", map[string]string{"OTEL_TRACES_SAMPLER": "ratio"},
			[]string{"OTEL_TRACES_SAMPLER is not a sampler OpenTelemetry knows", "parentbased_always_on", "parentbased_traceidratio", "value=ratio"}},
		{"an argument alone", map[string]string{"OTEL_TRACES_SAMPLER_ARG": "0.1"},
			[]string{"OTEL_TRACES_SAMPLER_ARG is set but OTEL_TRACES_SAMPLER is not", "set OTEL_TRACES_SAMPLER=parentbased_traceidratio"}},
		{"a delay as a duration", map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "5s"},
			[]string{"OTEL_BSP_SCHEDULE_DELAY is not an integer", "keeps its default", "5000 for 5s", "value=5s", `default="5000 ms"`}},
		{"a timeout with spaces", map[string]string{"OTEL_BSP_EXPORT_TIMEOUT": " 1000"},
			[]string{"OTEL_BSP_EXPORT_TIMEOUT is not an integer", "milliseconds", `default="30000 ms"`}},
		{"a queue size", map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "4k"},
			[]string{"OTEL_BSP_MAX_QUEUE_SIZE is not an integer", "whole number of spans", `default="2048 spans"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			logWarnings(slog.New(slog.NewTextHandler(&buf, nil)), sdkEnvWarnings(func(k string) string { return tc.env[k] }))
			got := buf.String()
			if len(tc.want) == 0 {
				if got != "" {
					t.Fatalf("warned of what the SDK reads: %q", got)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the warning %q lacks %q", got, w)
				}
			}
		})
	}
}
