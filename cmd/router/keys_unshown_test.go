package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// withStdout runs f with os.Stdout on w (and os.Stderr captured), and
// returns what f wrote to stderr.
func withStdout(t *testing.T, w *os.File, f func()) (stderr string) {
	t.Helper()
	_, stderr = captureOutput(t, func() {
		old := os.Stdout
		os.Stdout = w
		defer func() { os.Stdout = old }()
		f()
	})
	return stderr
}

// devFull is /dev/full opened for writing: every write to it fails with
// ENOSPC, as stdout redirected to a file on a full disk does.
func devFull(t *testing.T) *os.File {
	t.Helper()
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full on this machine: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// `router keys create` shows the key (and a webhook's secret) once: stored is
// only its hash. When stdout cannot be written (a full disk, a closed pipe:
// SIGPIPE is caught, so the write fails with EPIPE), the key nobody has is
// rolled back and the command fails saying so — before, it exited 0 and the
// key stayed valid, unknown to anyone; later it was revoked, but left in
// `keys list` as a key nobody ever held.
func TestKeysCreateFailsWhenTheKeyCannotBePrinted(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	for _, args := range [][]string{
		{"keys", "create", "--owner", "acme", "--config", cfg},
		{"keys", "create", "--owner", "hooked", "--webhook-url", "https://hooks.example.com/r", "--config", cfg},
	} {
		var code int
		stderr := withStdout(t, devFull(t), func() { code = run(ctx, args) })
		keys, err := db.Store.ListAPIKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var made, live []int64
		for _, k := range keys {
			if k.Owner == args[3] {
				made = append(made, k.ID)
				if k.RevokedAt == nil {
					live = append(live, k.ID)
				}
			}
		}
		if code != 1 {
			t.Errorf("%v: exit code %d, stderr %q; the key was never shown (unrevoked: %v), want 1", args, code, stderr, live)
		}
		if len(made) != 0 {
			t.Errorf("%v: keys %v, unrevoked %v; want none: a key nobody ever held must not be left in `keys list`", args, made, live)
			continue
		}
		if want := "no key was created"; !strings.Contains(stderr, want) || !strings.Contains(stderr, "no space left on device") {
			t.Errorf("%v: stderr %q, want why (no space left on device) and %q", args, stderr, want)
		}
	}
	if _, err := db.Store.WebhookFor(ctx, "hooked"); err == nil {
		t.Error("owner hooked has a webhook whose secret nobody has")
	}
}

// `router keys rotate-webhook-secret` prints the new secret before the
// rotation commits: one that could not be printed is rolled back, and the
// secret the receiver has keeps signing alone. Before, the rotation
// committed first: deliveries were signed with a secret nobody had, and
// rotating again to get one cut short the overlap of the receiver's secret.
func TestKeysRotateWebhookSecretRollsBackWhenTheSecretCannotBePrinted(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	createHooked(t, ctx, cfg)
	before, err := db.Store.WebhookFor(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	var code int
	stderr := withStdout(t, devFull(t), func() {
		code = run(ctx, []string{"keys", "rotate-webhook-secret", "--owner", "acme", "--config", cfg})
	})
	if code != 1 || !strings.Contains(stderr, "rolled back") || !strings.Contains(stderr, "no space left on device") {
		t.Errorf("exit code %d, stderr %q; want 1, saying why and that the rotation was rolled back", code, stderr)
	}
	if after, err := db.Store.WebhookFor(ctx, "acme"); err != nil || after != before {
		t.Fatalf("after the failed print: %+v (%v), want the webhook unchanged: %+v", after, err, before)
	}
	keys, err := db.Store.ListAPIKeys(ctx)
	if err != nil || len(keys) != 1 || keys[0].WebhookPreviousUntil != nil {
		t.Fatalf("keys %+v (%v): want no overlap running", keys, err)
	}
}

// A rotation whose secret was printed but whose commit then failed (here:
// its connection is ended while the print waits on a full pipe) did not take
// effect: the command fails, saying to discard the printed secret, and
// leaves the webhook as it was.
func TestKeysRotateWebhookSecretSaysToDiscardASecretItCouldNotCommit(t *testing.T) {
	db := testdb.New(t, store.Options{})
	app := fmt.Sprintf("rotate_commit_test_%d", time.Now().UnixNano()) // this test's connections in pg_stat_activity
	cfg := writeConfig(t, &testdb.DB{URL: db.URL + "&application_name=" + app}, "  - name: p\n    type: scripted")
	ctx := context.Background()
	createHooked(t, ctx, cfg)
	before, err := db.Store.WebhookFor(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fillPipe(t, w) // the secret's print waits until the test reads
	var code int
	var printed string
	stderr := withStdout(t, w, func() {
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"keys", "rotate-webhook-secret", "--owner", "acme", "--config", cfg})
		}()
		// Wait for the rotation's transaction to wait on the print (its last
		// statement the check that the new secret signs, the print blocked
		// on the full pipe), and end its connection; or for a rotation
		// committed before its print. The server reports the transaction
		// idle a moment before it flushes the check's answer: ended then,
		// the rotation fails on the check, before anything is printed.
	wait:
		for {
			var ended int
			if printBlocked() {
				if err := db.Pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
					WHERE application_name = $1 AND state = 'idle in transaction'
					AND query LIKE '%FROM webhook_owners WHERE owner = $1 AND secret = $2%'`, app).Scan(&ended); err != nil {
					t.Error(err)
					break
				}
				if ended > 0 {
					break
				}
			}
			if now, err := db.Store.WebhookFor(ctx, "acme"); err == nil && now.Secret != before.Secret {
				t.Error("the rotation committed before its secret was printed")
				break
			}
			select {
			case code = <-done:
				t.Errorf("the rotation ended (exit code %d) without waiting on its print", code)
				done <- code
				break wait
			case <-time.After(10 * time.Millisecond):
			}
		}
		read := make(chan string, 1)
		go func() { b, _ := io.ReadAll(r); read <- string(b) }()
		code = <-done
		w.Close() // the reader sees the end
		printed = strings.TrimLeft(<-read, "x")
	})
	secret := strings.TrimSpace(printed)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("stdout %q, want the printed secret (exit code %d, stderr %q)", printed, code, stderr)
	}
	if code != 1 || !strings.Contains(stderr, "not committed") || !strings.Contains(stderr, "discard the secret just printed") || strings.Contains(stderr, secret) {
		t.Errorf("exit code %d, stderr %q; want 1, saying to discard the printed secret", code, stderr)
	}
	if after, err := db.Store.WebhookFor(ctx, "acme"); err != nil || after != before {
		t.Fatalf("after the failed commit: %+v (%v), want the webhook unchanged: %+v", after, err, before)
	}
}

// createHooked creates a key with a webhook for owner acme.
func createHooked(t *testing.T, ctx context.Context, cfg string) {
	t.Helper()
	captureOutput(t, func() {
		if err := runKeys(ctx, []string{"create", "--owner", "acme", "--webhook-url", "https://hooks.example.com/r", "--config", cfg}); err != nil {
			t.Error(err)
		}
	})
}

// fillPipe fills the pipe w writes to, so that its next write waits for a
// read: F_GETPIPE_SZ says how much it holds.
func fillPipe(t *testing.T, w *os.File) {
	t.Helper()
	raw, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	var sizeErr error
	if err := raw.Control(func(fd uintptr) {
		const getPipeSize = 1032 // F_GETPIPE_SZ
		n, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, getPipeSize, 0)
		size, sizeErr = int(n), nil
		if errno != 0 {
			sizeErr = errno
		}
	}); err != nil || sizeErr != nil {
		t.Skipf("the pipe's size is unknown on this machine: %v %v", err, sizeErr)
	}
	if _, err := w.Write([]byte(strings.Repeat("x", size))); err != nil {
		t.Fatal(err)
	}
}

// An empty --webhook-url (a shell variable that was not set) is refused:
// before, it quietly created a key without a webhook.
func TestKeysCreateRefusesAnEmptyWebhookURL(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	for _, hook := range []string{"", " "} {
		var code int
		stdout, stderr := captureOutput(t, func() {
			code = run(ctx, []string{"keys", "create", "--owner", "acme", "--webhook-url", hook, "--config", cfg})
		})
		if code != 2 || stdout != "" || !strings.Contains(stderr, "--webhook-url is empty") {
			t.Errorf("--webhook-url %q: exit code %d, stdout %q, stderr %q; want 2 and why", hook, code, stdout, stderr)
		}
	}
	if keys, err := db.Store.ListAPIKeys(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("keys %+v (%v), want none created", keys, err)
	}
}

// printBlocked says whether a goroutine of this process is writing a rotated
// webhook secret to a file (the pipe the test keeps full): the rotation's
// transaction then waits on its print.
func printBlocked() bool {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "RotateWebhookSecretShown") && strings.Contains(g, "os.(*File).Write(") {
			return true
		}
	}
	return false
}
