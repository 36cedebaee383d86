package zkpaths

import "testing"

// TestDelegationTokenInfoGolden holds a token znode's bytes as Kafka 2.8's
// DelegationTokenInfoZNode writes them (kafka_2.13's key order), and reads them
// back.
func TestDelegationTokenInfoGolden(t *testing.T) {
	const golden = `{"issueTimestamp":1600000000000,"renewers":["User%3Arenewer1"],"tokenId":"0Hz5yZ3sQQWvh8x0JzyF3A","owner":"User%3Aowner","expiryTimestamp":1600086400000,"maxTimestamp":1600604800000,"version":1}`
	info := DelegationTokenInfo{Owner: "User%3Aowner", Renewers: []string{"User%3Arenewer1"}, IssueTimestamp: 1600000000000,
		MaxTimestamp: 1600604800000, ExpiryTimestamp: 1600086400000, TokenID: "0Hz5yZ3sQQWvh8x0JzyF3A"}
	if got := string(EncodeDelegationTokenInfo(info)); got != golden {
		t.Errorf("encoded\n%s\nwant\n%s", got, golden)
	}
	back, err := DecodeDelegationTokenInfo([]byte(golden))
	if err != nil || back.TokenID != info.TokenID || back.Renewers[0] != "User%3Arenewer1" || back.Version != 1 {
		t.Errorf("decoded %+v %v", back, err)
	}
	if got := string(EncodeDelegationTokenInfo(DelegationTokenInfo{Owner: "User%3Aa"})); got != `{"issueTimestamp":0,"renewers":[],"tokenId":"","owner":"User%3Aa","expiryTimestamp":0,"maxTimestamp":0,"version":1}` {
		t.Errorf("no renewers: %s", got)
	}
	if _, err := DecodeDelegationTokenInfo([]byte(`{"version":2}`)); err == nil {
		t.Error("version 2 decoded")
	}
}
