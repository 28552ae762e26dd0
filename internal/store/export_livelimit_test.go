package store

// LiveLimitLockSQL is the statement a claim batch takes its limited owners'
// max_live_jobs locks with ($1: the owners).
var LiveLimitLockSQL = liveLimitLockSQL
