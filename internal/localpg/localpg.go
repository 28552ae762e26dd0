// Package localpg starts a private PostgreSQL cluster from the machine's own
// PostgreSQL binaries, for `make run`, `make test` and tests run without
// DATABASE_URL (SPEC §13). It installs the distribution package when the binaries
// are missing and it runs as root, runs the server as an unprivileged user when the
// caller is root (initdb refuses root), listens on a free loopback port only, and
// stops the server when asked.
//
// It owns nothing but the cluster's process and data directory; it must not know
// about the router's schema.
package localpg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options says where and how to run the cluster.
type Options struct {
	// DataDir is the cluster's data directory. It is created (initdb) when empty.
	DataDir string
	// Fresh removes DataDir first (tests, router localdb). A DataDir in use
	// — its server running, or another start setting it up — is refused
	// (ErrInUse), nothing removed.
	Fresh bool
	// Durable keeps fsync on. Off, commits are not flushed (tests only).
	Durable bool
	// Logger receives progress lines; nil discards them.
	Logger *slog.Logger
}

// Cluster is a running private PostgreSQL server.
type Cluster struct {
	URL     string
	DataDir string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	logFile *os.File
	tempDir string // a fallback directory of ours, removed by Stop

	// What Restart needs to start the same server again on the same port.
	bin     string
	cred    *syscall.Credential
	port    int
	args    []string
	logPath string
	log     *slog.Logger
	// password is postgres's, in c.URL and in the password file; "" for an
	// attached server of a cluster made before clusters had one.
	password string

	// ctl makes Restart and Stop take turns: each stops the watch and the
	// server, and starts them again (Restart) or not (Stop).
	ctl sync.Mutex

	// The watch that keeps the server running (takeover.go).
	mu        sync.Mutex // guards cmd, done, since, stopped and the watch's fields, set by the watch when it starts the server
	stopped   bool       // Stop was called: no watch, no Restart from then on
	pid       int        // the server's postmaster, an attached one's or ours
	since     time.Time  // when this process last started the server
	logStart  int64      // where in the server log its last start by this process began
	stopWatch context.CancelFunc
	watchDone chan struct{}
	tookOver  chan struct{} // closed when an attached cluster first starts its server again
	restarted chan struct{} // closed (and replaced) each time the watch starts the server again
}

const dbName = "router"

// Start initialises (if needed) and starts the cluster, and returns once it accepts
// connections. Starts of one data directory take turns (dirLock): a second
// uses the server the first started.
func Start(ctx context.Context, opt Options) (*Cluster, error) {
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	bin, err := findBinDir()
	if err != nil && os.Geteuid() == 0 {
		log.Info("PostgreSQL binaries not found; installing the distribution package")
		if ierr := installPostgres(ctx); ierr != nil {
			return nil, fmt.Errorf("install PostgreSQL: %w (install the 'postgresql' package yourself, or set DATABASE_URL)", ierr)
		}
		bin, err = findBinDir()
	}
	if err != nil {
		return nil, err
	}
	cred, uname, err := serverCredential()
	if err != nil {
		return nil, err
	}
	dataDir, err := filepath.Abs(opt.DataDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dataDir), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(dataDir), err)
	}
	tempDir := ""
	if cred != nil && !reachableBy(dataDir, cred) {
		// As root in a directory the server's user cannot enter (a project
		// under /root, mode 0700 on Debian). A fresh cluster (tests) lives in
		// a temporary directory, removed at Stop; any other keeps its data
		// between runs, and a second Start (a CLI command while `make run`
		// serves) must find the running server: one directory per wanted
		// one, outside the project, kept.
		kept := !opt.Fresh
		alt, err := outsideDir(dataDir, opt.Fresh)
		if err != nil && kept {
			// outsideRoot cannot be written (a read-only root file system):
			// a temporary one, as before, its data not kept.
			log.Warn("cannot keep the data directory outside the project; using a temporary one, removed at stop", "err", err)
			kept = false
			alt, err = outsideDir(dataDir, true)
		}
		if err != nil {
			return nil, err
		}
		log.Warn("data directory is not reachable by the server's user; using one it can reach",
			"wanted", dataDir, "user", uname, "using", alt, "kept", kept)
		dataDir = filepath.Join(alt, "data")
		if !kept {
			tempDir = alt
		}
	}
	// A start that fails removes its temporary directory (Stop removes it
	// once the start has succeeded): every failed fresh start as root —
	// initdb stopped by Ctrl-C or failing, the lock refused — left one more.
	started := false
	defer func() {
		if !started && tempDir != "" {
			_ = os.RemoveAll(tempDir)
		}
	}()
	// One start at a time per data directory, from the look for a running
	// server to its own accepting connections. A Fresh start does not wait:
	// the other would lose its data directory.
	lock, err := lockDataDir(ctx, dataDir, !opt.Fresh)
	if err != nil {
		return nil, err
	}
	defer lock.unlock()
	if opt.Fresh {
		if pid, ok := postmasterOf(dataDir); ok {
			return nil, fmt.Errorf("%s: %w by a PostgreSQL server that is running (pid %d): a fresh start would delete it",
				dataDir, ErrInUse, pid)
		}
		if err := os.RemoveAll(dataDir); err != nil {
			return nil, fmt.Errorf("remove old data directory: %w", err)
		}
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", dataDir, err)
	}
	logPath := filepath.Join(filepath.Dir(dataDir), filepath.Base(dataDir)+".log")
	args := []string{"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "max_connections=300", "-c", "shared_buffers=128MB"}
	if !opt.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	if !opt.Fresh {
		bin = binDirFor(dataDir, bin)
		// Before claimDataDir: a server of another user's cluster that is
		// running is used as it is, its directory untouched.
		if c, ok := attach(ctx, dataDir); ok {
			log.Info("PostgreSQL already running on this data directory: using it", "url", c.shownURL(), "dir", dataDir)
			if c.password == "" {
				log.Warn("the embedded PostgreSQL running on this data directory has no password file: made by an earlier version "+
					"of the router, it lets every user of this machine in as its superuser; using it without a password. "+
					"It is given a password the next time this version starts it: stop what runs it (make run), then start again",
					"dir", dataDir, "password_file", filepath.Join(dataDir, passwordFile))
			}
			c.bin, c.cred, c.args, c.logPath, c.log = bin, cred, args, logPath, log
			if serversDir(dataDir, cred) {
				c.startWatch() // not another user's: this process can start it again
			}
			started = true
			return c, nil
		}
	}
	if err := claimDataDir(dataDir, cred, uname); err != nil {
		return nil, err
	}
	if !opt.Fresh {
		removeStalePidFile(dataDir, log)
	}
	existing := true
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		existing = false
		log.Info("initialising PostgreSQL cluster", "dir", dataDir)
		if err := initCluster(ctx, bin, cred, dataDir); err != nil {
			return nil, err
		}
	}
	password, err := readPassword(dataDir)
	if err != nil {
		return nil, err
	}
	if password == "" {
		// Made before clusters had a password, or its password file was
		// removed: the server is not running (attach found none), so it is
		// given one now, before anyone holds its URL.
		log.Warn("the embedded PostgreSQL has no password file (made by an earlier version of the router, which let every user "+
			"of this machine in as its superuser): giving it a password", "dir", dataDir, "password_file", filepath.Join(dataDir, passwordFile))
		if err := secureCluster(ctx, bin, cred, dataDir); err != nil {
			if ctx.Err() == nil {
				err = withAdvice(err, dataDir, true, 0)
			}
			return nil, err
		}
		if password, err = readPassword(dataDir); err != nil {
			return nil, err
		}
	}
	if !opt.Fresh {
		if err := markKept(dataDir, cred); err != nil {
			log.Warn("cannot mark the data directory as kept between starts; router localdb will not know to spare it",
				"dir", dataDir, "file", filepath.Join(dataDir, keptFile), "err", err)
		}
	}
	logFile, err := openServerLog(logPath, log)
	if err != nil {
		return nil, err
	}
	c := &Cluster{
		DataDir: dataDir, logFile: logFile, tempDir: tempDir,
		bin: bin, cred: cred, args: args, logPath: logPath, log: log, password: password,
	}
	// The port is free when freePort looks, not necessarily when postgres
	// binds it: another program (another cluster's postgres) may take it
	// meanwhile. Then this one exits and a new port is tried.
	for try := 1; ; try++ {
		port, err := freePort()
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.port = port
		c.URL = clusterURL(port, password)
		err = c.launch(ctx)
		if err == nil {
			break
		}
		if errors.Is(err, errPortTaken) && try < portTries && ctx.Err() == nil {
			log.Warn("the port given to PostgreSQL was taken by another program; trying another", "port", port, "err", err)
			continue
		}
		c.Stop()
		if ctx.Err() == nil {
			err = withAdvice(err, dataDir, existing, try)
		}
		return nil, err
	}
	log.Info("PostgreSQL ready", "url", c.shownURL(), "dir", dataDir)
	c.startWatch() // ours: started again should it die before Stop
	started = true
	return c, nil
}

// portTries is how many free ports a start tries before it gives up.
const portTries = 5

// initCluster runs initdb in a directory beside dataDir (named after it, with
// .initdb appended) and, once initdb has finished, renames it to dataDir,
// which must be empty. A start stopped during initdb (Ctrl-C during the
// first `make run`) thus never leaves a half-built cluster in dataDir: initdb
// writes PG_VERSION, which marks dataDir as initialised, long before it is
// done, and every later start would fail on the half-built one. What such a
// stop leaves beside dataDir is removed by the next start.
func initCluster(ctx context.Context, bin string, cred *syscall.Credential, dataDir string) error {
	tmp := dataDir + ".initdb"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("remove %s, left by an interrupted initdb: %w", tmp, err)
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	if cred != nil {
		if err := os.Chown(tmp, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(tmp)
			return fmt.Errorf("give %s to the server's user: %w", tmp, err)
		}
	}
	// initdb reads the password from a file the server's user can read,
	// beside tmp (initdb wants tmp empty), removed once read; the cluster's
	// own copy is then put in tmp, so that it comes with the cluster.
	password := newPassword()
	pwfile := tmp + ".pw"
	if err := writePrivate(pwfile, []byte(password+"\n"), cred); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("write the password for initdb: %w", err)
	}
	out, err := run(ctx, cred, filepath.Join(bin, "initdb"), "-D", tmp, "-U", "postgres", "--pwfile="+pwfile,
		"--auth=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-instructions")
	os.Remove(pwfile)
	if err == nil {
		err = writePrivate(filepath.Join(tmp, passwordFile), []byte(password+"\n"), nil)
	}
	if err != nil {
		os.RemoveAll(tmp)
		if ctx.Err() != nil {
			return fmt.Errorf("initdb: stopped (%w); the next start initialises the cluster again", ctx.Err())
		}
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	// os.Rename refuses to replace a directory, even an empty one.
	if err := os.Remove(dataDir); err != nil && !errors.Is(err, os.ErrNotExist) {
		os.RemoveAll(tmp)
		return fmt.Errorf("put the new cluster in place: %w (the data directory %s is not a PostgreSQL cluster and not empty: "+
			"give a new or empty directory, or empty this one)", err, dataDir)
	}
	if err := os.Rename(tmp, dataDir); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("put the new cluster in place: rename %s to %s: %w", tmp, dataDir, err)
	}
	return nil
}

// attach finds a server another process started on dataDir (say `make run`,
// while a CLI command of the same configuration runs): its postmaster.pid
// names a live process and a port that accepts connections. The Cluster
// returned is not this process's: Stop leaves the server running, unless
// this process has taken it over meanwhile (startWatch).
func attach(ctx context.Context, dataDir string) (*Cluster, bool) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return nil, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 4 {
		return nil, false
	}
	pid, perr := strconv.Atoi(strings.TrimSpace(lines[0]))
	port, qerr := strconv.Atoi(strings.TrimSpace(lines[3]))
	if perr != nil || qerr != nil || port <= 0 || !livePostmaster(pid, dataDir) {
		return nil, false
	}
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, false // starting or stopping: a start of our own reports why
	}
	conn.Close()
	// Unreadable (another user's cluster, this process not root): no
	// password, and the server refuses the connection, saying why.
	password, _ := readPassword(dataDir)
	return &Cluster{URL: clusterURL(port, password), DataDir: dataDir, port: port, pid: pid, password: password}, true
}

// RunningServer reports the pid of the live PostgreSQL server whose
// postmaster.pid is in dataDir. A file naming a process that is gone, one
// that is not a PostgreSQL server, or another cluster's server (working in
// another data directory) — its pid reused since the server died without
// removing the file (a crash, a reboot) — is stale: no server. It is the
// check Start makes (postmasterOf).
func RunningServer(dataDir string) (pid int, ok bool) {
	return postmasterOf(dataDir)
}

// livePostmaster reports whether pid is a live PostgreSQL server: a process
// (signal 0 reaches it; EPERM: it is another user's, the server runs as
// postgres when we are root) whose command is postgres, and neither this
// process nor its parent (pid 1, say, as root, which signal 0 always reaches).
// Given dataDir, it must also be that directory's server: a postmaster works
// in its data directory, so one whose working directory is another is
// another cluster's, which took the pid of a server that died without
// removing its postmaster.pid (a crash, a reboot). A working directory that
// cannot be read (another user's process, without root) counts as dataDir.
func livePostmaster(pid int, dataDir string) bool {
	if pid <= 0 || pid == os.Getpid() || pid == os.Getppid() {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false // the server is gone
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		if _, serr := os.Stat("/proc/self"); serr != nil {
			return true // no /proc to ask: the process lives, as signal 0 said
		}
		return false // gone since the signal
	}
	if strings.TrimSpace(string(comm)) != "postgres" {
		return false
	}
	if dataDir == "" {
		return true
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) // gone, or cannot tell
	}
	return sameDir(cwd, dataDir)
}

// sameDir reports whether the paths a and b name the same directory, once
// their symbolic links are resolved.
func sameDir(a, b string) bool {
	resolve := func(p string) string {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs // a relative one is this process's, not the server's: --dir .local/pg-test
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	return resolve(a) == resolve(b)
}

// launch starts the server process and waits until it accepts connections.
// A failure is a *startError, which holds what the server logged; one of a
// server that could not bind its port, or of a port another server answers
// on, is also errPortTaken.
func (c *Cluster) launch(ctx context.Context) error {
	logStart := int64(0)
	if fi, err := os.Stat(c.logPath); err == nil {
		logStart = fi.Size()
	}
	args := append([]string{"-D", c.DataDir, "-p", strconv.Itoa(c.port)}, c.args...)
	cmd := exec.Command(filepath.Join(c.bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = c.logFile, c.logFile
	cmd.Env = serverEnv
	// This process dying stops the server: a fast shutdown (SIGINT), which
	// ends the sessions of other processes attached to it, so that one of
	// them sees the server gone and starts it again (startWatch). A smart
	// one (SIGTERM) would wait for those sessions while refusing new ones.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGINT}
	if c.cred != nil {
		cmd.SysProcAttr.Credential = c.cred
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	done := make(chan struct{})
	c.mu.Lock()
	c.cmd, c.done, c.waitErr = cmd, done, nil
	c.pid, c.since, c.logStart = cmd.Process.Pid, time.Now(), logStart
	c.mu.Unlock()
	go func() { c.waitErr = cmd.Wait(); close(done) }()
	if err := c.waitReady(ctx, c.bin, c.cred, c.port); err != nil {
		c.halt()
		logged := logSince(c.logPath, logStart)
		if bindFailed(logged) && !errors.Is(err, errPortTaken) {
			err = fmt.Errorf("%w (%w)", err, errPortTaken)
		}
		return &startError{err: err, logPath: c.logPath, logged: logged}
	}
	return nil
}

// halt stops the server process, if it runs, and waits for it to exit;
// then this process runs no server (Started is false).
func (c *Cluster) halt() {
	c.mu.Lock()
	cmd, done := c.cmd, c.done
	c.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	select {
	case <-done:
	default:
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	c.mu.Lock()
	if c.cmd == cmd {
		c.cmd = nil
	}
	c.mu.Unlock()
}

// Restart stops the server the way a crash would (immediate shutdown: every
// connection is cut, in-flight transactions are lost and replayed from the WAL
// on start) and starts it again on the same port and data directory, returning
// once it accepts connections. It is for fault-injection tests. A Restart
// that fails leaves the server stopped, and not watched: Stop is all that
// remains to do. A cluster stopped (Stop) cannot be restarted: Start it.
func (c *Cluster) Restart(ctx context.Context) error {
	if c == nil {
		return errors.New("localpg: restart of a cluster that was never started")
	}
	c.ctl.Lock()
	defer c.ctl.Unlock()
	c.mu.Lock()
	stopped := c.stopped
	c.mu.Unlock()
	if stopped {
		return errors.New("localpg: restart of a stopped cluster: Stop ended it for good; Start the data directory again instead")
	}
	// The watch would take this stop for a crash and start the server too.
	watched := c.endWatch()
	if !c.Started() {
		if watched {
			c.startWatch() // nothing done: the watch goes on as before
		}
		return errors.New("localpg: restart of a cluster whose server this process does not run (attached to another process's, or it is being started again): restart that process's instead")
	}
	c.mu.Lock()
	cmd, done := c.cmd, c.done
	c.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("localpg: restart stopped while the server was shutting down (%w); it is not started again: Stop the cluster", ctx.Err())
	}
	if err := c.launch(ctx); err != nil {
		c.mu.Lock()
		c.cmd = nil // not started: Stop has nothing to stop, Started says so
		c.mu.Unlock()
		return err
	}
	if watched {
		c.startWatch()
	}
	return nil
}

// outsideRoot holds the kept data directories of projects the server's user
// cannot reach (outsideDir).
var outsideRoot = "/var/lib/router-localpg"

// outsideDir is where a data directory that the server's user cannot reach
// lives instead, mode 0755: for a fresh cluster a new temporary directory;
// otherwise outsideRoot/<hash of the wanted path>, the same on every run.
func outsideDir(wanted string, fresh bool) (string, error) {
	var dir string
	if fresh {
		d, err := os.MkdirTemp("", "router-pg-")
		if err != nil {
			return "", err
		}
		dir = d
	} else {
		dir = keptDir(wanted)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("create %s for the data directory %s, which the server's user cannot reach: %w", dir, wanted, err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		if fresh {
			_ = os.RemoveAll(dir) // of no use, and no one else would remove it
		}
		return "", err
	}
	if !fresh {
		if err := os.Chmod(outsideRoot, 0o755); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// waitReady waits until the server accepts connections, then creates the router
// database if it does not exist. The server on the port must be ours: one of
// another data directory (another cluster that took the port before ours
// could bind it) is errPortTaken. Ours exiting is a failure, whatever the
// port answers.
func (c *Cluster) waitReady(ctx context.Context, bin string, cred *syscall.Credential, port int) error {
	deadline := time.Now().Add(60 * time.Second)
	psql := filepath.Join(bin, "psql")
	p := strconv.Itoa(port)
	// In the environment, not on the command line, which every local user sees (ps).
	env := []string{"PGPASSWORD=" + c.password}
	for {
		select {
		case <-c.done:
			return fmt.Errorf("postgres exited during start-up: %v", c.waitErr)
		default:
		}
		out, err := runIn(ctx, cred, env, "", psql, "-h", "127.0.0.1", "-p", p, "-U", "postgres", "-d", "postgres", "-w",
			"-tAc", "SELECT current_setting('data_directory') || '|' || EXISTS (SELECT 1 FROM pg_database WHERE datname='"+dbName+"')")
		if err != nil && strings.Contains(out, "password authentication failed") && c.listening() {
			// Ours refused it. (Another cluster's server on the port, which
			// took it before ours could bind it, refuses it too: ours then
			// exits, "could not bind", and the port is found taken.)
			return fmt.Errorf("the server refused the password in %s (edited, or copied from another cluster): "+
				"remove that file and start again, and a new password is set", filepath.Join(c.DataDir, passwordFile))
		}
		if err == nil {
			out = strings.TrimSpace(out)
			i := strings.LastIndex(out, "|")
			if i < 0 {
				return fmt.Errorf("the server on port %d answered %q to a question about its data directory", port, out)
			}
			if dir := out[:i]; !sameDir(dir, c.DataDir) {
				return fmt.Errorf("port %d is another PostgreSQL server's, of data directory %s: %w", port, dir, errPortTaken)
			}
			if out[i+1:] != "true" {
				if out, err := runIn(ctx, cred, env, "", psql, "-h", "127.0.0.1", "-p", p, "-U", "postgres", "-d", "postgres", "-w",
					"-c", "CREATE DATABASE "+dbName); err != nil {
					return fmt.Errorf("create database: %w\n%s", err, out)
				}
			}
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("postgres exited during start-up: %v", c.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("postgres did not accept connections within 60s")
		}
	}
}

// listening reports whether this process's server says, in its
// postmaster.pid, that it accepts connections: it holds its port.
func (c *Cluster) listening() bool {
	c.mu.Lock()
	pid := c.pid
	c.mu.Unlock()
	b, err := os.ReadFile(filepath.Join(c.DataDir, "postmaster.pid"))
	if err != nil {
		return false
	}
	lines := strings.Split(string(b), "\n")
	return len(lines) > 7 && strings.TrimSpace(lines[0]) == strconv.Itoa(pid) && strings.TrimSpace(lines[7]) == "ready"
}

// Started reports whether this process started the server, so that Stop
// stops it; false for one another process runs (attach) and this one has
// not taken over, or nil.
func (c *Cluster) Started() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cmd != nil
}

// Stop shuts the server down (fast shutdown) and waits for it to exit. An
// attached cluster's server is left running, unless this process took it
// over.
func (c *Cluster) Stop() {
	if c == nil {
		return
	}
	c.ctl.Lock()
	defer c.ctl.Unlock()
	c.mu.Lock()
	c.stopped = true // no watch starts, nor Restart, from now on
	c.mu.Unlock()
	c.endWatch()
	c.halt()
	if c.logFile != nil {
		c.logFile.Close()
	}
	if c.tempDir != "" {
		_ = os.RemoveAll(c.tempDir)
	}
}

func findBinDir() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	matches, _ := filepath.Glob(filepath.Join(pgLibRoot, "*", "bin", "initdb"))
	if len(matches) > 0 {
		// Highest version last in lexical order for equal digit counts; pick the newest.
		best := matches[0]
		for _, m := range matches[1:] {
			if pgMajor(m) > pgMajor(best) {
				best = m
			}
		}
		return filepath.Dir(best), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			p = real
		}
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL server binaries (initdb, postgres) not found: install the 'postgresql' package (apt-get install postgresql) or set DATABASE_URL")
}

func pgMajor(path string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return v
}

func installPostgres(ctx context.Context) error {
	env := append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	for _, args := range [][]string{{"update"}, {"install", "-y", "--no-install-recommends", "postgresql"}} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %w\n%s", strings.Join(args, " "), err, lastLines(out, 20))
		}
	}
	return nil
}

// serverCredential is the unprivileged user the server runs as when we are root;
// nil when we are not root.
func serverCredential() (*syscall.Credential, string, error) {
	if os.Geteuid() != 0 {
		return nil, "", nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, name, nil
	}
	return nil, "", errors.New("running as root and no unprivileged user (postgres or nobody) exists for the PostgreSQL server: create one (useradd postgres) or set DATABASE_URL")
}

// reachableBy reports whether every existing ancestor of dir can be traversed by
// the given user (world or group execute bit, or owned by it).
func reachableBy(dir string, cred *syscall.Credential) bool {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			st := fi.Sys().(*syscall.Stat_t)
			mode := fi.Mode().Perm()
			ok := mode&0o001 != 0 ||
				(st.Gid == cred.Gid && mode&0o010 != 0) ||
				(st.Uid == cred.Uid && mode&0o100 != 0)
			if !ok {
				return false
			}
		}
		if d == "/" {
			return true
		}
	}
}

// runStopWait is how long a command run asked to stop (SIGINT, when its
// context ends) has to exit before it is killed.
const runStopWait = 10 * time.Second

// run runs a PostgreSQL program as cred and returns its output. When ctx
// ends it is interrupted (SIGINT), not killed: initdb then removes what it
// made rather than leaving it half-built.
func run(ctx context.Context, cred *syscall.Credential, name string, args ...string) (string, error) {
	return runIn(ctx, cred, nil, "", name, args...)
}

// serverEnv is the whole environment of the programs run here, the server
// included: not this process's, which holds the router's secrets (provider
// keys, the ops key), readable by the server's superuser (COPY … FROM
// PROGRAM 'env').
var serverEnv = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"}

// runIn is run with env added to serverEnv and stdin given.
func runIn(ctx context.Context, cred *syscall.Credential, env []string, stdin, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = runStopWait
	cmd.Dir = "/"
	cmd.Env = append(append(append([]string{}, serverEnv...), "PGCONNECT_TIMEOUT=2"), env...)
	cmd.Stdin = strings.NewReader(stdin)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}

// freePort is a loopback port free when asked (tests replace it).
var freePort = func() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
