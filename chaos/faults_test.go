package chaos

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestCoordinatorAsksAgainWhileNotAvailable: right after a fault the
// group's coordinator may answer COORDINATOR_NOT_AVAILABLE (its
// __consumer_offsets partition still electing a leader); a fault aimed at
// the coordinator asks again, as a client would, rather than failing.
func TestCoordinatorAsksAgainWhileNotAvailable(t *testing.T) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	var refused atomic.Int32
	fake.ControlKey(kmsg.FindCoordinator.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		if refused.Add(1) > 3 {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
		for _, key := range req.(*kmsg.FindCoordinatorRequest).CoordinatorKeys {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key, c.NodeID, c.ErrorCode = key, -1, kerr.CoordinatorNotAvailable.Code
			resp.Coordinators = append(resp.Coordinators, c)
		}
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp, nil, true
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(fake.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	in := &injector{adm: kadm.NewClient(cl), group: "g"}
	got, err := in.coordinator(context.Background())
	if err != nil || got != 0 || refused.Load() < 4 {
		t.Fatalf("coordinator %d, error %v after %d answers: want broker 0 once the coordinator is available", got, err, refused.Load())
	}
}
