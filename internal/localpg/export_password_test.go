package localpg

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PasswordFile is the name of the password file in a cluster's data directory.
const PasswordFile = passwordFile

// InitTrustCluster makes a cluster in dataDir as versions before clusters
// had a password did (initdb --auth=trust, no password file), and runs sql
// in it (single-user mode; "": none).
func InitTrustCluster(ctx context.Context, dataDir, sql string) error {
	bin, err := findBinDir()
	if err != nil {
		return err
	}
	cred, uname, err := serverCredential()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	if err := claimDataDir(dataDir, cred, uname); err != nil {
		return err
	}
	if out, err := run(ctx, cred, filepath.Join(bin, "initdb"), "-D", dataDir, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-instructions"); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	if sql == "" {
		return nil
	}
	out, err := runIn(ctx, cred, nil, sql, filepath.Join(bin, "postgres"), "--single", "-D", dataDir, "postgres")
	if err == nil && strings.Contains(out, "ERROR") {
		err = fmt.Errorf("%s", out)
	}
	return err
}

// StartTrustServer starts the server of dataDir on port with pg_ctl, which
// returns once it accepts connections, as an earlier version's `make run`
// would have it running; stop stops it.
func StartTrustServer(ctx context.Context, dataDir string, port int) (stop func() error, err error) {
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	cred, _, err := serverCredential()
	if err != nil {
		return nil, err
	}
	pgctl := filepath.Join(bin, "pg_ctl")
	opts := "-p " + strconv.Itoa(port) + " -c listen_addresses=127.0.0.1 -c unix_socket_directories="
	if out, err := run(ctx, cred, pgctl, "-D", dataDir, "-o", opts, "-l", filepath.Join(dataDir, "trust.log"), "-w", "start"); err != nil {
		return nil, fmt.Errorf("pg_ctl start: %w\n%s", err, out)
	}
	return func() error {
		if out, err := run(context.Background(), cred, pgctl, "-D", dataDir, "-m", "fast", "-w", "stop"); err != nil {
			return fmt.Errorf("pg_ctl stop: %w\n%s", err, out)
		}
		return nil
	}, nil
}
