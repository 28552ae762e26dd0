package localpg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// passwordFile holds the password of the cluster's superuser postgres, in
// the data directory: made with the cluster (initCluster), removed with it
// (a Fresh start, rm -rf .local/pg), and wherever the cluster is kept (as
// root, outsideDir). Mode 0600, this process's user's: only who starts the
// cluster reads it. The server listens on 127.0.0.1, which every local user
// reaches: without a password any of them would be its superuser, able to
// run programs as the server's OS user (COPY … PROGRAM).
const passwordFile = "router.password"

// newPassword is a random password: 32 bytes from crypto/rand, in hex (safe
// in a URL and in a SQL string literal as it is).
func newPassword() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// readPassword is the password of the cluster in dataDir; "" when it has no
// password file (a cluster made before clusters had a password).
func readPassword(dataDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, passwordFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the embedded PostgreSQL's password: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// writePrivate writes a file, mode 0600, for cred's user (nil: this
// process's), replacing any: a write and a rename, never half written.
func writePrivate(path string, data []byte, cred *syscall.Credential) error {
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if cred != nil {
		if err := os.Chown(tmp, int(cred.Uid), int(cred.Gid)); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// clusterURL is the URL of the router database on the server listening on
// port, as postgres with password (none: "").
func clusterURL(port int, password string) string {
	u := url.URL{Scheme: "postgres", Host: fmt.Sprintf("127.0.0.1:%d", port), Path: "/" + dbName, RawQuery: "sslmode=disable"}
	u.User = url.User("postgres")
	if password != "" {
		u.User = url.UserPassword("postgres", password)
	}
	return u.String()
}

// shownURL is c.URL for a log line: its password replaced by xxxxx.
func (c *Cluster) shownURL() string {
	u, err := url.Parse(c.URL)
	if err != nil {
		return "(unreadable URL)"
	}
	return u.Redacted()
}

// secureCluster gives the cluster in dataDir, made before clusters had a
// password (initdb --auth=trust, no password file), a password, and makes
// it ask for one. The server must not be running (Start holds the data
// directory's lock and found none): the password is set in single-user
// mode, which asks none, so no step can lock the user out of the data. In
// this order: the role's password, then pg_hba.conf (trust →
// scram-sha-256), then the password file. A start stopped before the last
// step finds no password file and does it all again, with a new password.
func secureCluster(ctx context.Context, bin string, cred *syscall.Credential, dataDir string) error {
	password := newPassword()
	// Given on stdin, never on the command line, which every local user sees (ps).
	out, err := runIn(ctx, cred, nil, "ALTER ROLE postgres PASSWORD '"+password+"';\n",
		filepath.Join(bin, "postgres"), "--single", "-D", dataDir, "-c", "password_encryption=scram-sha-256", "postgres")
	if err == nil && strings.Contains(out, "ERROR") {
		err = errors.New("the statement failed")
	}
	if err != nil {
		// A startError: the advice for a server that does not start
		// (withAdvice) holds for single-user mode too.
		return &startError{err: fmt.Errorf("set a password on the embedded PostgreSQL made without one (postgres --single): %w", err),
			logged: strings.ReplaceAll(out, password, "xxxxx")}
	}
	hba := filepath.Join(dataDir, "pg_hba.conf")
	b, err := os.ReadFile(hba)
	if err != nil {
		return fmt.Errorf("make the embedded PostgreSQL ask for its password: %w", err)
	}
	if err := writePrivate(hba, []byte(withoutTrust(string(b))), cred); err != nil {
		return fmt.Errorf("make the embedded PostgreSQL ask for its password: rewrite %s: %w", hba, err)
	}
	if err := writePrivate(filepath.Join(dataDir, passwordFile), []byte(password+"\n"), nil); err != nil {
		return fmt.Errorf("write the embedded PostgreSQL's password: %w", err)
	}
	return nil
}

// withoutTrust is the pg_hba.conf hba with each rule's method trust made
// scram-sha-256; comments and other rules are kept as they are. trust takes
// no options, so it is a rule's last field.
func withoutTrust(hba string) string {
	lines := strings.Split(hba, "\n")
	for i, line := range lines {
		rule, _, _ := strings.Cut(line, "#")
		fields := strings.Fields(rule)
		if len(fields) == 0 || fields[len(fields)-1] != "trust" {
			continue
		}
		at := strings.LastIndex(rule, "trust")
		lines[i] = line[:at] + "scram-sha-256" + line[at+len("trust"):]
	}
	return strings.Join(lines, "\n")
}
