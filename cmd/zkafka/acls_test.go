package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

// TestACLsTool runs kafka-acls through both of 2.8's paths — the brokers'
// ACL APIs and its own authorizer on ZooKeeper — against one cluster, so
// each sees what the other wrote, and compares the output with 2.8's
// AclCommand line for line.
func TestACLsTool(t *testing.T) {
	// The tool talks to the broker as User:ANONYMOUS, a super user here:
	// the ACLs it writes on the cluster would lock it out otherwise.
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: map[string]string{
		"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
		"super.users":           "User:ANONYMOUS",
	}})
	bs := strings.Join(c.BootstrapAddrs(), ",")
	acls := func(mode string, args ...string) []string {
		if mode == "zk" {
			return append([]string{"acls", "--authorizer-properties", "zookeeper.connect=" + c.ZK}, args...)
		}
		return append([]string{"acls", "--bootstrap-server", bs}, args...)
	}
	orders := "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)"
	aliceRead := " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) \n\n"

	expectTool(t, "Adding ACLs for resource `"+orders+"`: \n"+aliceRead+
		"Current ACLs for resource `"+orders+"`: \n"+aliceRead,
		acls("zk", "--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "orders")...)
	// The brokers learn of it through the change notification.
	wait.For(t, 10*time.Second, "the broker to list the ZooKeeper path's ACL", func() bool {
		_, out, _ := runTool(acls("bs", "--list", "--topic", "orders")...)
		return out == "Current ACLs for resource `"+orders+"`: \n"+aliceRead
	})

	// --producer --idempotent: WRITE, DESCRIBE, CREATE on the topic and
	// IDEMPOTENT_WRITE on the cluster; --consumer: READ, DESCRIBE and READ on
	// the group. Blocks and entries in the order of their text.
	bob := func(op string) string {
		return "(principal=User:bob, host=10.0.0.1, operation=" + op + ", permissionType=ALLOW)"
	}
	cluster := "ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)"
	clicks := "ResourcePattern(resourceType=TOPIC, name=clicks, patternType=LITERAL)"
	group := "ResourcePattern(resourceType=GROUP, name=readers, patternType=LITERAL)"
	expectTool(t, "Adding ACLs for resource `"+clicks+"`: \n \t"+bob("CREATE")+"\n\t"+bob("DESCRIBE")+"\n\t"+bob("WRITE")+" \n\n"+
		"Adding ACLs for resource `"+cluster+"`: \n \t"+bob("IDEMPOTENT_WRITE")+" \n\n"+
		"Current ACLs for resource `"+cluster+"`: \n \t"+bob("IDEMPOTENT_WRITE")+" \n\n"+
		"Current ACLs for resource `"+clicks+"`: \n \t"+bob("CREATE")+"\n\t"+bob("DESCRIBE")+"\n\t"+bob("WRITE")+" \n\n",
		acls("bs", "--add", "--producer", "--idempotent", "--topic", "clicks", "--allow-principal", "User:bob", "--allow-host", "10.0.0.1")...)
	expectTool(t, "Adding ACLs for resource `"+clicks+"`: \n \t"+bob("DESCRIBE")+"\n\t"+bob("READ")+" \n\n"+
		"Adding ACLs for resource `"+group+"`: \n \t"+bob("READ")+" \n\n"+
		"Current ACLs for resource `"+group+"`: \n \t"+bob("READ")+" \n\n"+
		"Current ACLs for resource `"+clicks+"`: \n \t"+bob("CREATE")+"\n\t"+bob("DESCRIBE")+"\n\t"+bob("READ")+"\n\t"+bob("WRITE")+" \n\n",
		acls("zk", "--add", "--consumer", "--topic", "clicks", "--group", "readers", "--allow-principal", "User:bob", "--allow-host", "10.0.0.1")...)

	// A prefixed Deny, then --list --principal across every resource.
	prefixed := "ResourcePattern(resourceType=TOPIC, name=ord, patternType=PREFIXED)"
	eveDeny := " \t(principal=User:eve, host=*, operation=WRITE, permissionType=DENY) \n\n"
	expectTool(t, "Adding ACLs for resource `"+prefixed+"`: \n"+eveDeny+"Current ACLs for resource `"+prefixed+"`: \n"+eveDeny,
		acls("bs", "--add", "--resource-pattern-type", "prefixed", "--topic", "ord", "--deny-principal", "User:eve", "--operation", "Write")...)
	wait.For(t, 10*time.Second, "the ZooKeeper path to list every ACL of alice and eve", func() bool {
		_, out, _ := runTool(acls("zk", "--list", "--principal", "User:alice", "--principal", "User:eve")...)
		return out == "ACLs for principal `User:alice`\nCurrent ACLs for resource `"+orders+"`: \n"+aliceRead+
			"ACLs for principal `User:eve`\nCurrent ACLs for resource `"+prefixed+"`: \n"+eveDeny
	})
	// --resource-pattern-type match lists what applies to a name.
	expectTool(t, "Current ACLs for resource `"+prefixed+"`: \n"+eveDeny+"Current ACLs for resource `"+orders+"`: \n"+aliceRead,
		acls("bs", "--list", "--topic", "orders", "--resource-pattern-type", "match")...)

	// --remove asks first; "n" keeps the ACLs, "y" removes them.
	removeArgs := []string{"--authorizer-properties", "zookeeper.connect=" + c.ZK, "--remove", "--topic", "orders", "--allow-principal", "User:alice", "--operation", "Read"}
	prompt := "Are you sure you want to remove ACLs: \n" + strings.TrimSuffix(aliceRead, "\n\n") + "\n from resource filter `" + orders + "`? (y/n)\n"
	for _, answer := range []string{"n", "y"} {
		var out, errOut bytes.Buffer
		code := runACLs(removeArgs, strings.NewReader(answer+"\n"), &out, &errOut)
		want := prompt + "Current ACLs for resource `" + orders + "`: \n" + aliceRead
		if answer == "y" {
			want = prompt
		}
		if code != 0 || out.String() != want {
			t.Errorf("--remove answered %s: exit %d\n%q\nwant\n%q\nstderr %s", answer, code, out.String(), want, errOut.String())
		}
	}
	expectTool(t, "", acls("bs", "--remove", "--force", "--cluster")...)
	wait.For(t, 10*time.Second, "the broker to drop the cluster's ACLs", func() bool {
		_, out, _ := runTool(acls("bs", "--list", "--cluster")...)
		return out == ""
	})

	// Usage errors print the message and the options, and exit 1.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"acls", "--list"}, `Missing required argument "[authorizer-properties]"`},
		{acls("bs", "--list", "--add"), "Command must include exactly one action: --list, --add, --remove. "},
		{acls("bs", "--add", "--topic", "t"), "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs."},
		{acls("bs", "--add", "--allow-principal", "User:a"), "You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token <Delegation Token ID>"},
		{acls("bs", "--add", "--topic", "t", "--allow-principal", "User:a", "--resource-pattern-type", "match"), "A '--resource-pattern-type' value of 'MATCH' is not valid when adding acls."},
		{acls("bs", "--add", "--group", "g", "--allow-principal", "User:a", "--operation", "Write"), "ResourceType GROUP only supports operations READ,DESCRIBE,DELETE,ALL"},
		{acls("bs", "--add", "--producer", "--group", "g", "--allow-principal", "User:a"), "With --producer you must specify a --topic"},
		{acls("bs", "--add", "--consumer", "--topic", "t", "--allow-principal", "User:a"), "With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified."},
		{acls("bs", "--add", "--producer", "--topic", "t", "--operation", "Read"), `Option "[producer]" can't be used with option "[operation]"`},
		{acls("bs", "--add", "--topic", "t", "--principal", "User:a"), "The --principal option is only available if --list is set"},
	} {
		code, _, errOut := runTool(tc.args...)
		if code != 1 || !strings.HasPrefix(errOut, tc.want+"\nOption ") {
			t.Errorf("zkafka %s: exit %d, stderr %q, want %q and the options", strings.Join(tc.args, " "), code, tail(errOut), tc.want)
		}
	}
	code, _, errOut := runTool("acls", "--help")
	if code != 1 || !strings.HasPrefix(errOut, "This tool helps to manage acls on kafka.\nOption ") ||
		!strings.Contains(errOut, "\n--resource-pattern-type                  The type of the resource pattern or    \n  <ANY|MATCH|LITERAL|PREFIXED>  ") {
		t.Errorf("--help: exit %d\n%s", code, errOut)
	}
}

// TestACLsToolWithoutAuthorizer: through a broker without an authorizer
// the command fails as 2.8's does, with the broker's SECURITY_DISABLED.
func TestACLsToolWithoutAuthorizer(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	code, out, _ := runTool("acls", "--bootstrap-server", strings.Join(c.BootstrapAddrs(), ","), "--list")
	if code != 1 || !strings.HasPrefix(out, "Error while executing ACL command: org.apache.kafka.common.errors.SecurityDisabledException: No Authorizer is configured on the broker\n") {
		t.Errorf("exit %d\n%s", code, out)
	}
}
