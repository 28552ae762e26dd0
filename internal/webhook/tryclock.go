package webhook

import "time"

// tryClock is the database's clock for one delivery try: the database's
// now() when the try read its event (store.Event.DBNow), advanced by the
// time the process clock says has passed since the read returned. The try's
// webhook-timestamp and recorded start are on it, so that they are the
// database's time, as the event's age, its send lease and the retries'
// schedule are, whatever the offset of this replica's clock: a replica
// whose clock is off by more than a receiver's tolerance (5 minutes in
// Standard Webhooks libraries and in docs/examples/webhookverify) had every
// try refused. Only the process clock's elapsed time is used, never its
// reading, so its offset cancels out; a read's now() is its transaction's
// start, so the time is early by at most the read's round trip.
type tryClock struct {
	db, local time.Time        // the database's now() at the read; the process clock when it returned
	process   func() time.Time // the process clock (Config.Now)
}

// newTryClock anchors the database's clock db (zero when the read measured
// nothing: then the process clock is used as it is) on the process clock.
func newTryClock(db time.Time, process func() time.Time) tryClock {
	return tryClock{db: db, local: process(), process: process}
}

// now is the database's time now.
func (c tryClock) now() time.Time {
	if c.db.IsZero() {
		return c.process()
	}
	return c.db.Add(c.process().Sub(c.local))
}
