package zkpaths

import (
	"encoding/json"
	"fmt"
)

// The delegation-token znodes (Kafka's DelegationTokenAuthZNode,
// DelegationTokensZNode, DelegationTokenChangeNotificationZNode).
const (
	DelegationTokenAuth = "/delegation_token"
	// DelegationTokens holds one child per token, named by its id.
	DelegationTokens = DelegationTokenAuth + "/tokens"
	// DelegationTokenChanges holds sequential token_change_NNNNNNNNNN
	// children whose data is the id of a token created, renewed or removed.
	DelegationTokenChanges = DelegationTokenAuth + "/token_changes"
	// DelegationTokenChangeSequencePrefix names the notifications.
	DelegationTokenChangeSequencePrefix = "token_change_"
)

// DelegationTokenPath is /delegation_token/tokens/<tokenId>
// (DelegationTokenInfoZNode.path).
func DelegationTokenPath(tokenID string) string { return DelegationTokens + "/" + tokenID }

// DelegationTokenChangePath is the full path of a child of
// /delegation_token/token_changes.
func DelegationTokenChangePath(child string) string { return DelegationTokenChanges + "/" + child }

// DelegationTokenInfo is a token's data as DelegationTokenInfoZNode keeps it
// (DelegationTokenManager.toJsonCompatibleMap): owner and renewers are
// principals ("User:alice") sanitized as Kafka's Sanitizer does, times are
// epoch milliseconds. zkCli shows
//
//	{"issueTimestamp":1600000000000,"renewers":["User%3Arenewer1"],"tokenId":"0Hz5yZ3sQQWvh8x0JzyF3A","owner":"User%3Aowner","expiryTimestamp":1600086400000,"maxTimestamp":1600604800000,"version":1}
//
// Kafka builds the JSON from a Scala immutable Map of seven keys, so the keys
// come in that map's hash order; this is Scala 2.13's (the kafka_2.13
// build: CHAMP nodes by the low five bits of each key's improved hash, a
// node's own entries before its sub-nodes). The HMAC is not stored: every
// broker derives it from the token id and the shared secret key.
type DelegationTokenInfo struct {
	IssueTimestamp  int64    `json:"issueTimestamp"`
	Renewers        []string `json:"renewers"`
	TokenID         string   `json:"tokenId"`
	Owner           string   `json:"owner"`
	ExpiryTimestamp int64    `json:"expiryTimestamp"`
	MaxTimestamp    int64    `json:"maxTimestamp"`
	Version         int      `json:"version"`
}

// EncodeDelegationTokenInfo writes a token's znode data (version 1).
func EncodeDelegationTokenInfo(t DelegationTokenInfo) []byte {
	t.Version = 1
	if t.Renewers == nil {
		t.Renewers = []string{}
	}
	b, _ := json.Marshal(t) // strings, ints and a string slice always marshal
	return b
}

// DecodeDelegationTokenInfo reads a token's znode data; Kafka requires
// version 1.
func DecodeDelegationTokenInfo(data []byte) (DelegationTokenInfo, error) {
	var t DelegationTokenInfo
	if err := json.Unmarshal(data, &t); err != nil {
		return t, fmt.Errorf("%w: delegation token: %w", ErrMalformed, err)
	}
	if t.Version != 1 {
		return t, fmt.Errorf("%w: delegation token version %d, not 1", ErrMalformed, t.Version)
	}
	return t, nil
}
