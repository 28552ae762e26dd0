package localpg

// SetOutsideRoot moves where unreachable data directories are kept, and
// returns the restore.
func SetOutsideRoot(dir string) (restore func()) {
	before := outsideRoot
	outsideRoot = dir
	return func() { outsideRoot = before }
}
