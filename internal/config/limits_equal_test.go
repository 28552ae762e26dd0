package config

import (
	"strings"
	"testing"
)

// Two keys of one owner must carry the same limits; they were compared as
// written, so limits that take the same effect written two ways were refused
// as "different limits", telling the operator to change what already agreed.
func TestOwnersKeysWithLimitsOfTheSameEffectAgree(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	same := map[string][2]string{
		"burst left out is the rate rounded up": {"{requests_per_second: 5, burst: 5}", "{requests_per_second: 5}"},
		"a fractional rate rounds up":           {"{requests_per_second: 2.5, burst: 3}", "{requests_per_second: 2.5}"},
		"burst 0 is the default burst":          {"{requests_per_second: 5, burst: 0}", "{requests_per_second: 5}"},
		"0 is unlimited, as left out":           {"{max_live_jobs: 0}", "{}"},
	}
	for name, l := range same {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte("api_keys:\n  - {owner: acme, key_env: A, limits: " + l[0] +
				"}\n  - {owner: acme, key_env: B, limits: " + l[1] + "}\n")); err != nil {
				t.Fatalf("%s and %s: %v", l[0], l[1], err)
			}
		})
	}
	differ := [][2]string{
		{"{requests_per_second: 5, burst: 6}", "{requests_per_second: 5}"},
		{"{requests_per_second: 5}", "{requests_per_second: 6}"},
		{"{max_live_jobs: 1}", "{}"},
	}
	for _, l := range differ {
		_, err := Parse([]byte("api_keys:\n  - {owner: acme, key_env: A, limits: " + l[0] +
			"}\n  - {owner: acme, key_env: B, limits: " + l[1] + "}\n"))
		if err == nil || !strings.Contains(err.Error(), "owner acme has another key with different limits") {
			t.Errorf("%s and %s: %v", l[0], l[1], err)
		}
	}
}
