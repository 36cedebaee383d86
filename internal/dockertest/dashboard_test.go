package dockertest

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/wait"
)

// TestDashboardService: the ui service of docker-compose.yml, on the offline
// image, serves the dashboard on the host's loopback and follows the
// cluster inside the network: three registered brokers, each answering on
// its INTERNAL listener.
func TestDashboardService(t *testing.T) {
	t.Parallel()
	p := NewProject(t, Single, sessionTimeout)
	p.Up()
	p.MustCompose(2*time.Minute, "up", "-d", "ui")
	url := "http://127.0.0.1:" + strconv.Itoa(p.DashboardPort) + "/"
	var page string
	wait.For(t, 2*time.Minute, "the dashboard to show three brokers answering", func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		page = string(b)
		return strings.Count(page, `data-broker="`) == 3 && strings.Count(page, "<td>answers</td>") == 3
	})
	for id := 1; id <= 3; id++ {
		if want := "INTERNAL://kafka" + strconv.Itoa(id) + ":19092"; !strings.Contains(page, want) {
			t.Errorf("the dashboard does not show broker %d's endpoint %s", id, want)
		}
	}
}
