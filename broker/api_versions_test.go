package broker

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAPIVersionsMatchKafka28 generates the ApiKey → versions table from the
// broker's ApiVersions answer and checks it against
// testdata/api_versions_2.8.2.txt, which holds Kafka 2.8.2's validVersions
// beside ours: every advertised API has its row with the range advertised,
// an unserved row is not advertised, and a row that differs from 2.8.2 says
// why.
func TestAPIVersionsMatchKafka28(t *testing.T) {
	s := &Server{apis: advertisedAPIs(false, false)}
	advertised := map[int16]string{}
	for _, k := range s.apiVersionsResponse(3, 0).(*kmsg.ApiVersionsResponse).ApiKeys {
		advertised[k.ApiKey] = fmt.Sprintf("%d-%d", k.MinVersion, k.MaxVersion)
	}

	f, err := os.Open("testdata/api_versions_2.8.2.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[int16]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 4 {
			t.Fatalf("short row %q", line)
		}
		key := atoi16(t, fields[0])
		name, kafka, ours, note := fields[1], fields[2], fields[3], strings.Join(fields[4:], " ")
		rows[key] = true
		got, ok := advertised[key]
		if !ok {
			got = "-"
		}
		if got != ours {
			t.Errorf("%s (%d): advertised %s, the table says %s", name, key, got, ours)
		}
		if ours != kafka && note == "" {
			t.Errorf("%s (%d): %s differs from Kafka 2.8.2's %s without a note", name, key, ours, kafka)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for key, v := range advertised {
		if !rows[key] {
			t.Errorf("%s (%d) v%s is advertised but Kafka 2.8.2 has no such API", kmsg.NameForKey(key), key, v)
		}
	}
}

// TestEveryAPIHasAnErrorResponse: an unsupported version, a refused
// authorization and a panicking handler are each answered by the API's
// errorResponse, so every API has one; ApiVersions alone does without, as
// unsupportedVersion answers it itself.
func TestEveryAPIHasAnErrorResponse(t *testing.T) {
	for key, a := range apiTable() {
		if a.errorResponse == nil && key != apiVersionsAPI.key {
			t.Errorf("%s (%d) has no errorResponse", kmsg.NameForKey(key), key)
		}
	}
}

// TestConsumerProtocolAPIsAdvertisedOnlyWhenEnabled: a strict 2.8 broker
// (the default) advertises neither KIP-848 API and OffsetCommit up to 2.8's
// v8; with group.coordinator.rebalance.protocols=classic,consumer it
// advertises ConsumerGroupHeartbeat and ConsumerGroupDescribe v0–1 (Kafka
// 4.0's) and OffsetCommit v9.
func TestConsumerProtocolAPIsAdvertisedOnlyWhenEnabled(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		s := &Server{apis: advertisedAPIs(false, enabled)}
		got := map[int16]string{}
		for _, k := range s.apiVersionsResponse(3, 0).(*kmsg.ApiVersionsResponse).ApiKeys {
			got[k.ApiKey] = fmt.Sprintf("%d-%d", k.MinVersion, k.MaxVersion)
		}
		want := map[int16]string{68: "-", 69: "-", 8: "0-8"}
		if enabled {
			want = map[int16]string{68: "0-1", 69: "0-1", 8: "0-9"}
		}
		for key, w := range want {
			g, ok := got[key]
			if !ok {
				g = "-"
			}
			if g != w {
				t.Errorf("consumer protocol %t: %s advertised %s, want %s", enabled, kmsg.NameForKey(key), g, w)
			}
		}
	}
}
