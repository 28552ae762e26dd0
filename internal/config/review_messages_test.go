package config

import (
	"strings"
	"testing"
)

// Each refusal names the value it refuses and how to fix it (the default to
// fall back on, the entry to rename), and only the field that is wrong: a
// route with max_inflight 0 was told "max_inflight and max_attempts must be
// at least 1". Found by review.
func TestRefusalsSayTheValueAndTheFix(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	const two = "providers:\n  - {name: a, type: scripted}\n  - {name: b, type: scripted}\n"
	for _, tc := range []struct {
		yaml, want, notWant string
	}{
		{two + "routes:\n  r: {providers: [a, b], max_inflight: 0}\n",
			"routes.r.max_inflight (0) must be at least 1 (omit it for the default, 2)", "max_attempts"},
		{two + "routes:\n  r: {providers: [a, b], max_attempts: -1}\n",
			"routes.r.max_attempts (-1) must be at least 1 (omit it for the default, 4)", "max_inflight"},
		{two + "routes:\n  r: {providers: [a, b], hedge_budget: {min_concurrent: -2}}\n",
			"routes.r.hedge_budget.min_concurrent (-2) must be 0 or more (omit it for the default, 3)", ""},
		{"providers:\n  - {name: a, type: scripted, max_retries: -1}\nroutes:\n  r: {providers: [a]}\n",
			"providers[0] (a).max_retries (-1) must be 0 or more (0: no retries; omit it for the default, 1)", ""},
		{"providers:\n  - {name: a, type: scripted, max_retries: 101}\nroutes:\n  r: {providers: [a]}\n",
			"providers[0] (a).max_retries (101) must be at most 100: each retry is another paid call", ""},
		{"providers:\n  - {name: a, type: scripted}\n  - {name: a, type: scripted}\nroutes:\n  r: {providers: [a]}\n",
			`providers[1]: the name "a" is used twice, by providers[0] and providers[1]: rename one of them`, ""},
		{"providers:\n  - {name: a, type: scripted}\n  - {name: b, type: scripted}\n  - {name: a, type: scripted}\n  - {name: a, type: scripted}\nroutes:\n  r: {providers: [a, b]}\n",
			`providers[3]: the name "a" is used twice, by providers[0] and providers[3]: rename one of them`, "by providers[2]"},
		{"providers:\n  - {name: a, type: scripted}\nroutes:\n  r: {providers: [a], models: ['']}\n",
			`routes.r.models: an empty model name ("") can never be reached`, ""},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s\nParse: %v\nwant %q", tc.yaml, err, tc.want)
			continue
		}
		if tc.notWant != "" && strings.Contains(err.Error(), tc.notWant) {
			t.Errorf("%s\nParse: %v\nshould not mention %q", tc.yaml, err, tc.notWant)
		}
	}
	// The bound admits what it names.
	if _, err := Parse([]byte("providers:\n  - {name: a, type: scripted, max_retries: 100}\nroutes:\n  r: {providers: [a]}\n")); err != nil {
		t.Fatalf("max_retries 100 refused: %v", err)
	}
}
