package zkclient

import (
	"slices"
	"testing"
	"time"
)

func TestParseConnect(t *testing.T) {
	for _, tc := range []struct {
		in      string
		servers []string
		chroot  string
		bad     bool
	}{
		{in: "localhost:2181", servers: []string{"localhost:2181"}},
		{in: "h1:2181,h2:2182/kafka", servers: []string{"h1:2181", "h2:2182"}, chroot: "/kafka"},
		{in: "h1:2181, h2:2182 /a/b", servers: []string{"h1:2181", "h2:2182"}, chroot: "/a/b"},
		{in: "h1/", servers: []string{"h1"}},
		{in: "h1/a/", bad: true},
		{in: "h1/a//b", bad: true},
		{in: "h1/a/../b", bad: true},
		{in: "/kafka", bad: true},
		{in: "", bad: true},
	} {
		servers, chroot, err := parseConnect(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("parseConnect(%q) = %v, %q; want an error", tc.in, servers, chroot)
			}
			continue
		}
		if err != nil || !slices.Equal(servers, tc.servers) || chroot != tc.chroot {
			t.Errorf("parseConnect(%q) = %v, %q, %v; want %v, %q", tc.in, servers, chroot, err, tc.servers, tc.chroot)
		}
	}
}

func TestConnectResponseRoundTrip(t *testing.T) {
	passwd := []byte("0123456789abcdef")
	req := appendConnectRequest(nil, 6*time.Second, 0x1234, passwd)
	if got, want := len(req), 4+4+8+4+8+4+len(passwd)+1; got != want {
		t.Fatalf("connect request is %d bytes, want %d", got, want)
	}
	// A ConnectResponse as ZooKeeper 3.8 sends it, with the trailing readOnly flag.
	resp := []byte{0, 0, 0, 0, 0, 0, 0x17, 0x70, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0, 0, 0, 16}
	resp = append(append(resp, passwd...), 0)
	r, err := parseConnectResponse(resp)
	if err != nil || r.sessionID != 0x1234 || string(r.passwd) != string(passwd) || r.timeout != 6*time.Second {
		t.Fatalf("parseConnectResponse = %+v, %v", r, err)
	}
	if _, err := parseConnectResponse(resp[:25]); err == nil {
		t.Fatal("a truncated password was accepted")
	}
	if _, err := parseConnectResponse(resp[:10]); err == nil {
		t.Fatal("a truncated response was accepted")
	}
}
