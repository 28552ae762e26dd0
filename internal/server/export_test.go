package server

import "time"

// SetDBCloseWait changes how long closing the database waits for connections
// in use, and returns the restore.
func SetDBCloseWait(d time.Duration) (restore func()) {
	before := dbCloseWait
	dbCloseWait = d
	return func() { dbCloseWait = before }
}

// SetOnAwaitCut installs f, run as ServeListeners starts waiting for the
// tenant handlers it cut that are still running, and returns the restore.
func SetOnAwaitCut(f func()) (restore func()) {
	before := onAwaitCut
	onAwaitCut = f
	return func() { onAwaitCut = before }
}
