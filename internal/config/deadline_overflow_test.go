package config

import (
	"testing"
	"time"
)

// routes.<name>.deadline is accepted up to Go's largest duration (about 292
// years; docs: "a duration of years is as good as forever"), and a deadline
// written as "forever" is a natural thing to write for a route that must not
// time out. Left out, hedge_max is min(10s, ¾ of deadline) — computed as
// Deadline*3/4, which overflows int64 for any deadline over about 97 years
// (MaxInt64/3 ns): ¾ of it comes out negative, is raised to 1ns, and both
// hedge bounds become 1ns: the loaded configuration says "hedge after 1ns"
// where the defaults (2s, 10s) were meant.
func TestLongRouteDeadlineKeepsDefaultHedgeBounds(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, deadline := range []string{"876000h", "2562047h"} { // 100 years; the largest duration
		c, err := Parse([]byte(`
database_url: embedded
providers:
  - {name: a, type: scripted}
  - {name: b, type: scripted}
routes:
  r: {providers: [a, b], deadline: ` + deadline + `}
`))
		if err != nil {
			t.Fatalf("deadline %s: %v", deadline, err)
		}
		r := c.Routes["r"]
		if r.HedgeMax.D() != 10*time.Second || r.HedgeMin.D() != 2*time.Second {
			t.Errorf("deadline %s: hedge_max %s, hedge_min %s; want the defaults 10s and 2s (¾ of the deadline is far above them)",
				deadline, r.HedgeMax.D(), r.HedgeMin.D())
		}
	}
}
