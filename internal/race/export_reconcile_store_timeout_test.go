package race

import "time"

// WithReconcileStoreTimeout is rc with each database call of a lookup's
// resolution bounded by d in place of reconcileStoreTimeout, so that a test
// of a call that never answers need not wait the production bound.
func WithReconcileStoreTimeout(rc RecoveryConfig, d time.Duration) RecoveryConfig {
	rc.storeTimeout = d
	return rc
}
