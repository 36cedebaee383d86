package tutorial

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestAwaitStartBeforeExec covers a start-up race of scripts/lib.sh: the pid
// start_detached records is first a forked shell, whose command line does not
// yet name the process it is about to exec. await_start must treat that pid
// as starting, not as "exited during start-up". The fake process here holds
// the gap open until the readiness check has run once, so the race is taken
// every time.
func TestAwaitStartBeforeExec(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	lib := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "lib.sh")
	dir := t.TempDir()
	// Until "release" exists its command line is "bash .../slow-exec.sh";
	// then it becomes the process the pattern names and reports ready.
	fake := filepath.Join(dir, "slow-exec.sh")
	script := `until [ -e "$1/release" ]; do sleep 0.05; done
exec bash -c 'touch "$1/ready"; exec sleep 60' the-real-process "$1"
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	test := `set -euo pipefail
. "$LIB"
RUN=$DIR/run LOGS=$DIR/logs
# The first readiness check lets the fake process go on to its exec.
ready() { touch "$DIR/release"; [ -e "$DIR/ready" ]; }
start_detached fake bash "$DIR/slow-exec.sh" "$DIR"
trap 'kill_group "$(<"$RUN/fake.pid")"' EXIT
await_start fake 30 ready
echo started
`
	cmd := exec.Command("bash", "-c", test)
	cmd.Env = append(os.Environ(), "LIB="+lib, "DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "started") {
		t.Fatalf("await_start on a process that had not exec'd yet: %v\n%s", err, out)
	}
}
