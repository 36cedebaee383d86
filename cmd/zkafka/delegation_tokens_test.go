package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

// TestDelegationTokensTool drives delegation-tokens through a SASL_PLAINTEXT
// listener with a --command-config of ScramLoginModule credentials: create
// (with a renewer), describe (all, by owner), renew, expire, and the
// failures 2.8 prints (an unknown HMAC, a token-authenticated admin
// client, the argument checks), line for line with DelegationTokenCommand.
func TestDelegationTokensTool(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"listeners":                   "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms":     "SCRAM-SHA-512",
		"delegation.token.master.key": "tool-secret",
	}})
	c.WaitForController()
	saslAddr, _ := c.Broker(1).ListenerAddr("SASL_PLAINTEXT")
	expectTool(t, "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.\nUse --bootstrap-server instead to specify a broker to connect to.\nCompleted updating config for entity: user-principal 'alice'.\n",
		"configs", "--zookeeper", c.ZK, "--alter", "--add-config", "SCRAM-SHA-512=[password=alice-secret]", "--entity-type", "users", "--entity-name", "alice")
	wait.For(t, 20*time.Second, "alice to authenticate", func() bool {
		return saslAuthenticates(saslAddr, scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism())
	})
	dir := t.TempDir()
	config := func(name, jaasOptions string) string {
		f := filepath.Join(dir, name)
		props := "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n" +
			`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required ` + jaasOptions + ";\n"
		if err := os.WriteFile(f, []byte(props), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	alice := config("alice.properties", `username="alice" password="alice-secret"`)
	tool := func(cfg string, args ...string) (int, string, string) {
		return runTool(append([]string{"delegation-tokens", "--bootstrap-server", saslAddr, "--command-config", cfg}, args...)...)
	}

	code, out, errOut := tool(alice, "--create", "--max-life-time-period", "-1", "--renewer-principal", "User:bob")
	date := `\d{4}-\d\d-\d\dT\d\d:\d\d`
	row := func(renewers string) string {
		return `\n([A-Za-z0-9_-]{22}) +([A-Za-z0-9+/]{86}==) User:alice +` + regexp.QuoteMeta(renewers) + ` +(` + date + `) +(` + date + `) +(` + date + `) *\n`
	}
	header := "\n" + `TOKENID         HMAC                           OWNER           RENEWERS                  ISSUEDATE       EXPIRYDATE      MAXDATE        `
	created := regexp.MustCompile(`^Calling create token operation with renewers :\[User:bob\] , max-life-time-period :-1\nCreated delegation token with tokenId : ([A-Za-z0-9_-]{22})` +
		regexp.QuoteMeta(header) + row("[User:bob]") + `$`)
	m := created.FindStringSubmatch(out)
	if code != 0 || m == nil || m[1] != m[2] {
		t.Fatalf("create: exit %d\n%q\n%s", code, out, errOut)
	}
	id, hmac := m[1], m[3]

	code, out, _ = tool(alice, "--describe")
	if want := regexp.MustCompile(`^Calling describe token operation for current user.\nTotal number of tokens : 1` + regexp.QuoteMeta(header) + row("[User:bob]") + `$`); code != 0 || !want.MatchString(out) || !strings.Contains(out, id) {
		t.Errorf("describe: exit %d\n%q", code, out)
	}
	code, out, _ = tool(alice, "--describe", "--owner-principal", "User:nobody")
	if want := "Calling describe token operation for owners :[User:nobody]\nTotal number of tokens : 0" + header; code != 0 || out != want {
		t.Errorf("describe by owner: exit %d\n%q\nwant\n%q", code, out, want)
	}
	code, out, _ = tool(alice, "--renew", "--hmac", hmac, "--renew-time-period", "-1")
	if want := regexp.MustCompile(`^Calling renew token operation with hmac :` + regexp.QuoteMeta(hmac) + ` , renew-time-period :-1\nCompleted renew operation. New expiry date : ` + date + `\n$`); code != 0 || !want.MatchString(out) {
		t.Errorf("renew: exit %d\n%q", code, out)
	}

	// Authenticated with the token itself, the admin client may not ask.
	token := config("token.properties", `username="`+id+`" password="`+hmac+`" tokenauth="true"`)
	code, out, _ = tool(token, "--describe")
	if want := "Calling describe token operation for current user.\nError while executing delegation token command : org.apache.kafka.common.errors.UnsupportedByAuthenticationException: " +
		"Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels.\n"; code != 1 || out != want {
		t.Errorf("describe with the token: exit %d\n%q", code, out)
	}

	code, out, _ = tool(alice, "--expire", "--hmac", hmac, "--expiry-time-period", "-1")
	if want := regexp.MustCompile(`^Calling expire token operation with hmac :` + regexp.QuoteMeta(hmac) + ` , expire-time-period : -1\nCompleted expire operation. New expiry date : ` + date + `\n$`); code != 0 || !want.MatchString(out) {
		t.Errorf("expire: exit %d\n%q", code, out)
	}
	code, out, _ = tool(alice, "--renew", "--hmac", hmac, "--renew-time-period", "1000")
	if want := "Calling renew token operation with hmac :" + hmac + " , renew-time-period :1000\nError while executing delegation token command : org.apache.kafka.common.errors.DelegationTokenNotFoundException: Delegation Token is not found on server.\n"; code != 1 || out != want {
		t.Errorf("renew an expired token: exit %d\n%q", code, out)
	}

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--create", "--describe"}, "Command must include exactly one action: --create, --renew, --expire or --describe"},
		{[]string{"--create"}, `Missing required argument "[max-life-time-period]"`},
		{[]string{"--renew", "--hmac", "x"}, `Missing required argument "[renew-time-period]"`},
		{[]string{"--create", "--max-life-time-period", "1", "--hmac", "x"}, `Option "[create]" can't be used with option "[hmac]"`},
		{[]string{"--create", "--max-life-time-period", "soon"}, "Cannot parse argument 'soon' of option max-life-time-period"},
	} {
		code, out, errOut := tool(alice, c.args...)
		if code != 1 || out != "" || !strings.HasPrefix(errOut, c.msg+"\nOption ") {
			t.Errorf("%v: exit %d\n%s%s", c.args, code, out, errOut)
		}
	}
	code, _, errOut = runTool("delegation-tokens", "--describe")
	if code != 1 || !strings.HasPrefix(errOut, `Missing required argument "[bootstrap-server]"`) {
		t.Errorf("no --bootstrap-server: exit %d\n%s", code, errOut)
	}
}
