package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/zkpaths"
)

// TestUpdateFeatures sends UpdateFeatures as kafka-features.sh would: a broker that is not the
// controller answers NOT_CONTROLLER; the controller refuses each bad update with Kafka 2.8's
// message, refuses every upgrade (a 2.8 broker supports no feature), and deletes a feature someone
// finalized in /feature by hand.
func TestUpdateFeatures(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	ctrl := c.WaitForController()
	send := func(to int32, updates ...kmsg.UpdateFeaturesRequestFeatureUpdate) *kmsg.UpdateFeaturesResponse {
		req := kmsg.NewPtrUpdateFeaturesRequest()
		req.TimeoutMillis, req.FeatureUpdates = 5000, updates
		return raw(t, c.Addr(to), req, 0).(*kmsg.UpdateFeaturesResponse)
	}
	update := func(f string, level int16, downgrade bool) kmsg.UpdateFeaturesRequestFeatureUpdate {
		return kmsg.UpdateFeaturesRequestFeatureUpdate{Feature: f, MaxVersionLevel: level, AllowDowngrade: downgrade}
	}
	if resp := send(3-ctrl, update("x", 1, false)); resp.ErrorCode != 41 || resp.ErrorMessage == nil || *resp.ErrorMessage != "This is not the correct controller for this cluster." {
		t.Errorf("to a broker that is not the controller: error %d %v, want NOT_CONTROLLER (41)", resp.ErrorCode, resp.ErrorMessage)
	}
	want := map[string]string{
		"":        "Feature name can not be empty.",
		"x":       "Could not apply finalized feature update because the provided feature is not supported.",
		"gone":    "Can not delete non-existing finalized feature.",
		"zero":    "Can not provide maxVersionLevel: 0 less than 1 without setting the allowDowngrade flag to true in the request.",
		"finals":  "Can not upgrade a finalized feature from existing maxVersionLevel:3 to the same value.",
		"lowered": "Could not apply finalized feature update because the provided feature is not supported.",
	}
	hand := zkpaths.FinalizedFeatures{Status: zkpaths.FeatureStatusEnabled, Features: map[string]zkpaths.FinalizedVersionRange{
		"finals": {MinVersionLevel: 1, MaxVersionLevel: 3}, "lowered": {MinVersionLevel: 1, MaxVersionLevel: 3}, "deleted": {MinVersionLevel: 1, MaxVersionLevel: 2},
	}}
	if _, err := c.ZooKeeper().Set(zkpaths.Feature, hand.Encode(), -1); err != nil {
		t.Fatal(err)
	}
	resp := send(ctrl, update("", 1, false), update("x", 1, false), update("gone", 0, true), update("zero", 0, false),
		update("finals", 3, false), update("lowered", 2, true), update("deleted", 0, true))
	if resp.ErrorCode != 0 || len(resp.Results) != 7 {
		t.Fatalf("top-level error %d, %d results: %+v", resp.ErrorCode, len(resp.Results), resp)
	}
	for _, r := range resp.Results {
		msg := ""
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		if r.Feature == "deleted" {
			if r.ErrorCode != 0 {
				t.Errorf("deleting a finalized feature: error %d %q", r.ErrorCode, msg)
			}
			continue
		}
		if r.ErrorCode != 42 || msg != want[r.Feature] {
			t.Errorf("%q: error %d %q, want INVALID_REQUEST (42) %q", r.Feature, r.ErrorCode, msg, want[r.Feature])
		}
	}
	data, _, err := c.ZooKeeper().Get(zkpaths.Feature)
	if err != nil {
		t.Fatal(err)
	}
	got, err := zkpaths.DecodeFinalizedFeatures(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Features["deleted"]; ok || len(got.Features) != 2 || got.Features["lowered"].MaxVersionLevel != 3 {
		t.Errorf("/feature after the updates: %+v, want finals and lowered unchanged, deleted gone", got)
	}

	old := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: map[string]string{"inter.broker.protocol.version": "2.6"}})
	old.WaitForController()
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{update("x", 1, false)}
	if resp := raw(t, old.Addr(1), req, 0).(*kmsg.UpdateFeaturesResponse); resp.ErrorCode != 42 || resp.ErrorMessage == nil || *resp.ErrorMessage != "Feature versioning system is disabled." {
		t.Errorf("with inter.broker.protocol.version 2.6: error %d %v, want INVALID_REQUEST (42) and 2.8's message", resp.ErrorCode, resp.ErrorMessage)
	}
}

// TestApiVersionsFinalizedFeatures: ApiVersions v3 carries /feature's finalized features and its
// version as their epoch, following the znode as it changes; with feature versioning disabled
// (inter.broker.protocol.version 2.6) the epoch is -1, as Kafka 2.8 answers.
func TestApiVersionsFinalizedFeatures(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	c.WaitForController()
	versions := func(addr string) *kmsg.ApiVersionsResponse {
		req := kmsg.NewPtrApiVersionsRequest()
		req.ClientSoftwareName, req.ClientSoftwareVersion = "test", "1"
		return raw(t, addr, req, 3).(*kmsg.ApiVersionsResponse)
	}
	c.WaitFor("finalized features epoch 0, none finalized", func() bool {
		r := versions(c.Addr(1))
		return r.FinalizedFeaturesEpoch == 0 && len(r.FinalizedFeatures) == 0
	})
	f := zkpaths.FinalizedFeatures{Status: zkpaths.FeatureStatusEnabled, Features: map[string]zkpaths.FinalizedVersionRange{"demo": {MinVersionLevel: 1, MaxVersionLevel: 2}}}
	if _, err := c.ZooKeeper().Set(zkpaths.Feature, f.Encode(), 0); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("finalized features epoch 1 with demo [1, 2]", func() bool {
		r := versions(c.Addr(1))
		return r.FinalizedFeaturesEpoch == 1 && len(r.FinalizedFeatures) == 1 && r.FinalizedFeatures[0].Name == "demo" &&
			r.FinalizedFeatures[0].MinVersionLevel == 1 && r.FinalizedFeatures[0].MaxVersionLevel == 2
	})

	old := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: map[string]string{"inter.broker.protocol.version": "2.6"}})
	old.WaitForController()
	data, _, err := old.ZooKeeper().Get(zkpaths.Feature)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := zkpaths.DecodeFinalizedFeatures(data); err != nil || got.Status != zkpaths.FeatureStatusDisabled {
		t.Fatalf("/feature with inter.broker.protocol.version 2.6: %+v, %v; want disabled", got, err)
	}
	if r := versions(old.Addr(1)); r.FinalizedFeaturesEpoch != -1 || len(r.FinalizedFeatures) != 0 {
		t.Errorf("feature versioning disabled: epoch %d, features %v; want -1 and none", r.FinalizedFeaturesEpoch, r.FinalizedFeatures)
	}
}
