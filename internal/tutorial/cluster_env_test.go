package tutorial

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestClusterScriptRefusesBadSettings: a malformed setting stops cluster.sh with one line naming
// it, before it touches anything.
func TestClusterScriptRefusesBadSettings(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ env, want string }{
		{"ZK_SERVER_HEAP=lots", "error: ZK_SERVER_HEAP=lots: give ZooKeeper's heap in MB, e.g. 512\n"},
		{"ZK_SERVER_HEAP=0", "error: ZK_SERVER_HEAP=0: give ZooKeeper's heap in MB, e.g. 512\n"},
		{"ZKAFKA_ZK_SERVERS=2", "error: ZKAFKA_ZK_SERVERS=2: give 1 (one server), 3 or 5 (an ensemble)\n"},
	} {
		cmd := exec.Command(filepath.Join(root, "scripts", "cluster.sh"), "status")
		cmd.Env = append(os.Environ(), "ZKAFKA_DATA="+t.TempDir(), c.env)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 || string(out) != c.want {
			t.Errorf("%s cluster.sh status: exit %d, output %q; want 1 and %q", c.env, code, out, strings.TrimSpace(c.want))
		}
	}
}
