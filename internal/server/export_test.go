package server

import "time"

// SetDBCloseWait changes how long closing the database waits for connections
// in use, and returns the restore.
func SetDBCloseWait(d time.Duration) (restore func()) {
	before := dbCloseWait
	dbCloseWait = d
	return func() { dbCloseWait = before }
}
