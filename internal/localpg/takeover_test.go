package localpg_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/localpg"
)

// The process that started the server stopping (a CLI command that ends
// while `make run`, attached, serves) does not leave the attached process
// without a database: it gets a server again at the same URL, and owns it,
// so that its own stop leaves nothing running. Found by review: `make run`
// served 503 until restarted.
func TestOwnerStopLeavesAttachedUserItsServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	data := filepath.Join(tempDir(t), "data")
	owner, err := localpg.Start(ctx, localpg.Options{DataDir: data}) // the CLI command
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Stop)
	user, err := localpg.Start(ctx, localpg.Options{DataDir: data}) // make run, attached
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(user.Stop)
	if user.Started() || user.URL != owner.URL {
		t.Fatalf("second start: started %v, URL %s; want attached to %s", user.Started(), user.URL, owner.URL)
	}
	connect(ctx, t, user.URL)

	owner.Stop()
	awaitTakeover(ctx, t, user)
	connect(ctx, t, user.URL)
	if !user.Started() {
		t.Error("the attached cluster started the server again but does not own it")
	}
	user.Stop()
	if pid, ok := localpg.RunningServer(data); ok {
		t.Fatalf("server (pid %d) still running after its last user stopped", pid)
	}
}

// The process that started the server dying (killed; its server gets a
// Pdeathsig) does not leave an attached process that holds connections
// without a database either: the server shuts down at once, rather than
// waiting for those sessions while refusing new ones (smart shutdown), and
// the attached process starts it again.
func TestOwnerDeathLeavesAttachedUserItsServer(t *testing.T) {
	if os.Getenv(ownerHelperEnv) != "" {
		t.Skip("run as the helper process")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	data := filepath.Join(tempDir(t), "data")
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperOwnerProcess$", "-test.count=1")
	helper.Env = append(os.Environ(), ownerHelperEnv+"="+data)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := helper.StdinPipe() // the helper waits until it closes
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = helper.Process.Kill(); _ = helper.Wait() })
	url, err := readURL(out)
	if err != nil {
		t.Fatalf("helper process: %v", err)
	}
	user, err := localpg.Start(ctx, localpg.Options{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(user.Stop)
	if user.Started() || user.URL != url {
		t.Fatalf("second start: started %v, URL %s; want attached to %s", user.Started(), user.URL, url)
	}
	held, err := pgx.Connect(ctx, user.URL) // a session of the attached process's pool
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close(context.Background())

	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	awaitTakeover(ctx, t, user)
	connect(ctx, t, user.URL)
	user.Stop()
	if pid, ok := localpg.RunningServer(data); ok {
		t.Fatalf("server (pid %d) still running after its last user stopped", pid)
	}
}

const ownerHelperEnv = "LOCALPG_TEST_OWNER_DATA"

// TestHelperOwnerProcess is the process TestOwnerDeathLeavesAttachedUserItsServer
// kills: it starts a server, prints its URL and waits for its stdin to close.
func TestHelperOwnerProcess(t *testing.T) {
	data := os.Getenv(ownerHelperEnv)
	if data == "" {
		t.Skip("helper process of TestOwnerDeathLeavesAttachedUserItsServer")
	}
	c, err := localpg.Start(context.Background(), localpg.Options{DataDir: data})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer c.Stop()
	fmt.Println("url:", c.URL)
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

func readURL(out io.Reader) (string, error) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if u, ok := strings.CutPrefix(line, "url: "); ok {
			return u, nil
		}
		if strings.HasPrefix(line, "error: ") {
			return "", fmt.Errorf("%s", line)
		}
	}
	return "", fmt.Errorf("no URL printed: %v", sc.Err())
}

func awaitTakeover(ctx context.Context, t *testing.T, c *localpg.Cluster) {
	t.Helper()
	took := localpg.TookOver(c)
	if took == nil {
		t.Fatal("the attached cluster does not watch its server")
	}
	select {
	case <-took:
	case <-ctx.Done():
		t.Fatal("the attached cluster did not start the server again after its starter stopped it")
	}
}

func connect(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	conn.Close(ctx)
}
