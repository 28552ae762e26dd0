package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// created_after and created_before are exclusive bounds at any precision the
// caller gives, though PostgreSQL keeps created_at to the microsecond: a job
// created at T is before every instant after T — T plus 1 ns included — and
// after every instant before it, and neither before nor after T itself.
func TestListBoundsBelowAMicrosecond(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "k1", `{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 15, 4, 5, 123456000, time.UTC) // a whole microsecond
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET created_at = $2 WHERE id = $1`, j.ID, at); err != nil {
		t.Fatal(err)
	}
	plus1 := time.FixedZone("+01:00", 3600)
	for _, tc := range []struct {
		name          string
		after, before time.Time
		want          int
	}{
		{"before T+1ns", time.Time{}, at.Add(time.Nanosecond), 1},
		{"before T+500ns", time.Time{}, at.Add(500 * time.Nanosecond), 1},
		{"before T+999ns", time.Time{}, at.Add(999 * time.Nanosecond), 1},
		{"before T+500ns, offset +01:00", time.Time{}, at.Add(500 * time.Nanosecond).In(plus1), 1},
		{"before T", time.Time{}, at, 0},
		{"before T-1ns", time.Time{}, at.Add(-time.Nanosecond), 0},
		{"before T-999ns", time.Time{}, at.Add(-999 * time.Nanosecond), 0},
		{"after T-1ns", at.Add(-time.Nanosecond), time.Time{}, 1},
		{"after T-999ns", at.Add(-999 * time.Nanosecond), time.Time{}, 1},
		{"after T-500ns, offset +01:00", at.Add(-500 * time.Nanosecond).In(plus1), time.Time{}, 1},
		{"after T", at, time.Time{}, 0},
		{"after T+1ns", at.Add(time.Nanosecond), time.Time{}, 0},
		{"after T+999ns", at.Add(999 * time.Nanosecond), time.Time{}, 0},
		{"after T-1ns and before T+1ns", at.Add(-time.Nanosecond), at.Add(time.Nanosecond), 1},
		{"after T-1ns and before T", at.Add(-time.Nanosecond), at, 0},
	} {
		jobs, _, err := b.st.ListJobs(ctx, store.ListFilter{Owner: "acme", CreatedAfter: tc.after, CreatedBefore: tc.before, Limit: 10})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(jobs) != tc.want {
			t.Errorf("%s (job created at T = %s): %d jobs, want %d", tc.name, at.Format(time.RFC3339Nano), len(jobs), tc.want)
		}
	}
}

// Normalized gives every spelling of the same bounds the same form: offsets
// and digits below the microsecond that select the same jobs.
func TestListFilterNormalized(t *testing.T) {
	at := time.Date(2026, 1, 2, 15, 4, 5, 123456000, time.UTC)
	plus1 := time.FixedZone("+01:00", 3600)
	same := []store.ListFilter{
		{CreatedAfter: at, CreatedBefore: at.Add(time.Microsecond)},
		{CreatedAfter: at.In(plus1), CreatedBefore: at.Add(time.Microsecond).In(plus1)},
		{CreatedAfter: at.Add(999 * time.Nanosecond), CreatedBefore: at.Add(time.Nanosecond)},
	}
	want := same[0].Normalized()
	for _, f := range same {
		got := f.Normalized()
		if !got.CreatedAfter.Equal(want.CreatedAfter) || !got.CreatedBefore.Equal(want.CreatedBefore) ||
			got.CreatedAfter.Location() != time.UTC || got.CreatedBefore.Location() != time.UTC {
			t.Errorf("Normalized(%v, %v) = %v, %v; want %v, %v in UTC", f.CreatedAfter, f.CreatedBefore,
				got.CreatedAfter, got.CreatedBefore, want.CreatedAfter, want.CreatedBefore)
		}
	}
	if z := (store.ListFilter{}).Normalized(); !z.CreatedAfter.IsZero() || !z.CreatedBefore.IsZero() {
		t.Errorf("no bounds became %v, %v", z.CreatedAfter, z.CreatedBefore)
	}
}
