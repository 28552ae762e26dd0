package localpg

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// keptDir is where the kept data directory for wanted (absolute) lives when
// the server's user cannot reach wanted: outsideRoot/<first 6 bytes of the
// SHA-256 of wanted, in hex>, the same on every run (outsideDir).
func keptDir(wanted string) string {
	sum := sha256.Sum256([]byte(wanted))
	return filepath.Join(outsideRoot, hex.EncodeToString(sum[:6]))
}

// ClusterExists reports whether a cluster has been created for the data
// directory dataDir: in it, or where Start keeps it when the server's user
// cannot reach dataDir (as root, a project under /root). A one-shot command
// asks before Start would initdb a new one (internal/server).
func ClusterExists(dataDir string) bool {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return false
	}
	for _, d := range []string{abs, filepath.Join(keptDir(abs), "data")} {
		if _, err := os.Stat(filepath.Join(d, "PG_VERSION")); err == nil {
			return true
		}
	}
	return false
}
