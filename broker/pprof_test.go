package broker_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/internal/testcluster"
)

func TestPprofListener(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: map[string]string{"zkafka.pprof.listener": "127.0.0.1:0"}})
	addr := c.Broker(1).PprofAddr()
	if addr == "" {
		t.Fatal("zkafka.pprof.listener is set but the broker reports no pprof address")
	}
	resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	// The broker's own goroutines are in the profile: it profiles this broker.
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "broker.(*listener).serve") {
		t.Fatalf("GET goroutine profile: %s\n%.500s", resp.Status, body)
	}
	c.StopBroker(1)
	if _, err := http.Get("http://" + addr + "/debug/pprof/"); err == nil {
		t.Fatal("the pprof listener still answers after the broker stopped")
	}
}
