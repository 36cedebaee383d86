package zkpaths

import "testing"

// TestDelegationTokenInfoGolden holds a token znode's bytes as Kafka 2.8's
// DelegationTokenInfoZNode writes the fields, and reads them back.
func TestDelegationTokenInfoGolden(t *testing.T) {
	const golden = `{"version":1,"owner":"User%3Aowner","renewers":["User%3Arenewer1"],"issueTimestamp":1600000000000,"maxTimestamp":1600604800000,"expiryTimestamp":1600086400000,"tokenId":"0Hz5yZ3sQQWvh8x0JzyF3A"}`
	info := DelegationTokenInfo{Owner: "User%3Aowner", Renewers: []string{"User%3Arenewer1"}, IssueTimestamp: 1600000000000,
		MaxTimestamp: 1600604800000, ExpiryTimestamp: 1600086400000, TokenID: "0Hz5yZ3sQQWvh8x0JzyF3A"}
	if got := string(EncodeDelegationTokenInfo(info)); got != golden {
		t.Errorf("encoded\n%s\nwant\n%s", got, golden)
	}
	back, err := DecodeDelegationTokenInfo([]byte(golden))
	if err != nil || back.TokenID != info.TokenID || back.Renewers[0] != "User%3Arenewer1" || back.Version != 1 {
		t.Errorf("decoded %+v %v", back, err)
	}
	if got := string(EncodeDelegationTokenInfo(DelegationTokenInfo{Owner: "User%3Aa"})); got != `{"version":1,"owner":"User%3Aa","renewers":[],"issueTimestamp":0,"maxTimestamp":0,"expiryTimestamp":0,"tokenId":""}` {
		t.Errorf("no renewers: %s", got)
	}
	if _, err := DecodeDelegationTokenInfo([]byte(`{"version":2}`)); err == nil {
		t.Error("version 2 decoded")
	}
}
