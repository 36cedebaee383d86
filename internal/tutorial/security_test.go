package tutorial

import "testing"

// TestSecurityTutorial runs docs/SECURITY.md's tested blocks on a sandbox's
// secure cluster (cluster.sh up --secure), as TestTutorial does TUTORIAL.md.
func TestSecurityTutorial(t *testing.T) {
	// Its sandbox and ports are its own, so it runs after the package's
	// sequential tests, beside TestTutorialDocker, rather than after them.
	t.Parallel()
	playDoc(t, "SECURITY.md", 20)
}
