package store

// LazyCommitSQL is lazyCommitSQL, for tests.
const LazyCommitSQL = lazyCommitSQL
