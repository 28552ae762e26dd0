package localpg_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/routerhq/router/internal/localpg"
)

const lockHelperEnv = "LOCALPG_TEST_NONROOT_DATA"

// After a start as root (`sudo make run`) made the project's .local, the
// user's own start could not create the data directory's lock file there
// and failed saying only "permission denied": not whose the directory is,
// nor what to do. Found by review. A user's start is this test binary run
// again as nobody, in a project of nobody's whose .local is root's.
func TestNonRootStartAfterRootStartSaysWhatToDo(t *testing.T) {
	if data := os.Getenv(lockHelperEnv); data != "" {
		_, err := localpg.Start(context.Background(), localpg.Options{DataDir: data, Durable: true})
		if err != nil {
			os.Stdout.WriteString("error: " + err.Error())
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make a directory of root's and run a start as another user")
	}
	nb, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody to run a start as")
	}
	uid, _ := strconv.Atoi(nb.Uid)
	gid, _ := strconv.Atoi(nb.Gid)
	proj := tempDir(t)
	if err := os.Chown(proj, uid, gid); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(proj, ".local")
	if err := os.Mkdir(local, 0o755); err != nil { // as a start as root leaves it
		t.Fatal(err)
	}
	bin := filepath.Join(proj, "localpg.test") // where nobody can run it
	copyFile(t, os.Args[0], bin)
	cmd := exec.Command(bin, "-test.run=^TestNonRootStartAfterRootStartSaysWhatToDo$", "-test.count=1")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+filepath.Join(local, "pg"))
	cmd.Dir = proj
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, _ := cmd.CombinedOutput()
	msg := string(out)
	if !strings.Contains(msg, "error: ") {
		t.Fatalf("a start as nobody in a .local of root's did not fail:\n%s", msg)
	}
	for _, want := range []string{
		local + " belongs to root (uid 0)",
		"run this command as root",
		"sudo chown -R $(id -u):$(id -g) " + local,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error of a start as nobody does not say %q:\n%s", want, msg)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
