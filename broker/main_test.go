package broker_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
)

func TestMain(m *testing.M) {
	if os.Getenv(etlMemberEnv) != "" {
		os.Exit(etlMember())
	}
	zktest.Main(m)
}

func zkSession(t *testing.T, connect string) *zkclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	zk, err := zkclient.Connect(ctx, zkclient.Config{Connect: connect})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zk.Close() })
	return zk
}
