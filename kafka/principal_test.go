package kafka

import "testing"

func TestParsePrincipal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Principal
		bad  bool
	}{
		{in: "User:alice", want: Principal{"User", "alice"}},
		{in: "User:CN=a:b", want: Principal{"User", "CN=a:b"}},
		{in: "User:", want: Principal{"User", ""}},
		{in: "alice", bad: true},
		{in: ":alice", bad: true},
	} {
		got, err := ParsePrincipal(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParsePrincipal(%q) = %v, %v", tc.in, got, err)
		}
		if !tc.bad && got.String() != tc.in {
			t.Errorf("%q round-trips to %q", tc.in, got.String())
		}
	}
	if Anonymous.String() != "User:ANONYMOUS" {
		t.Errorf("Anonymous is %s", Anonymous)
	}
}
