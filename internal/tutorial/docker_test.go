package tutorial

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/dockertest"
)

// TestTutorialDocker runs the tutorial's "With Docker" blocks as a reader
// without a registry does: after scripts/docker-images.sh, with COMPOSE_FILE
// naming docker-compose.yml and docker-compose.offline.yml. The project gets
// its own name and host ports, a 6 s session timeout like the sandbox's
// brokers, and `exec`/`run` get -T because the test has no terminal.
func TestTutorialDocker(t *testing.T) {
	t.Parallel()
	var steps []step
	for _, st := range parseTutorial(t, docPath("TUTORIAL.md")) {
		switch st.kind {
		case "tutorial-docker":
			st.kind = "tutorial"
		case "tutorial-docker-wait":
			st.kind = "tutorial-wait"
		default:
			continue
		}
		steps = append(steps, st)
	}
	if len(steps) < 8 {
		t.Fatalf("only %d tested Docker commands in docs/TUTORIAL.md", len(steps))
	}
	p := dockertest.NewProject(t, dockertest.Single, 6*time.Second)
	compose := strings.Join(dockertest.ComposeCommand(t), " ")
	pairs := []string{
		"docker compose exec ", compose + " exec -T ",
		"docker compose run --rm ", compose + " run --rm -T ",
		"docker compose ", compose + " ",
	}
	for i, port := range p.BrokerPorts {
		pairs = append(pairs, fmt.Sprintf("localhost:%d", 9092+i), fmt.Sprintf("localhost:%d", port))
	}
	r := &tutorialRun{
		t:     t,
		doc:   "TUTORIAL.md",
		s:     &sandbox{t: t, root: dockertest.Root(), env: p.Env()},
		ports: strings.NewReplacer(pairs...),
		bound: map[string]string{},
	}
	r.play(steps)
}
