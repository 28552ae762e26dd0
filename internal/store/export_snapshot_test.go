package store

import "context"

// WithBetweenSnapshotReads returns ctx carrying f, which a read of a page of
// jobs (ListJobs, LiveJobsPage, RecentJobs, LiveJobs) calls after it has read
// its jobs and before it reads their attempts and race events.
func WithBetweenSnapshotReads(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, betweenSnapshotReadsKey{}, f)
}
