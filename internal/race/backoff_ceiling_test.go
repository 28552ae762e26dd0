package race_test

import (
	"math"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
)

// The longest wait before a retry doubles from execution.retry.base up to
// its cap and stays there, for any retry count and any base up to the cap:
// shifting the base left wrapped to a wait far shorter than the base (a base
// of about five hours, 2^44+1 ns, gave 1 ms before the 21st retry).
func TestBackoffCeilingNeverWraps(t *testing.T) {
	for _, b := range []race.Backoff{
		{}, // the defaults
		{Base: time.Duration(1<<44 + 1), Cap: time.Duration(math.MaxInt64)},
		{Base: time.Nanosecond, Cap: time.Duration(math.MaxInt64)},
		{Base: time.Duration(math.MaxInt64 / 3), Cap: time.Duration(math.MaxInt64)},
		{Base: time.Hour, Cap: time.Second},
	} {
		b = b.WithDefaults()
		prev := time.Duration(0)
		for n := 1; n <= 200; n++ {
			d := b.Ceiling(n)
			if d < prev || d < min(b.Base, b.Cap) || d > b.Cap {
				t.Fatalf("%+v: retry %d waits up to %v after %v; want non-decreasing, from the base up to the cap", b, n, d, prev)
			}
			prev = d
		}
		if prev != b.Cap {
			t.Fatalf("%+v: retry 200 waits up to %v, want the cap", b, prev)
		}
	}
	if d := (race.Backoff{}).WithDefaults(); d.Ceiling(1) != 200*time.Millisecond || d.Ceiling(2) != 400*time.Millisecond {
		t.Fatalf("defaults: %v, %v; want 200ms, 400ms", d.Ceiling(1), d.Ceiling(2))
	}
}
