package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/security"
	"github.com/zkafka/zkafka/zkpaths"
)

var zkSecurityMigrationOptions = []optionSpec{
	argOpt("zookeeper.acl", "", "Indicates whether to make the Kafka znodes in ZooKeeper secure or unsecure. The options are 'secure' and 'unsecure'"),
	argOpt("zookeeper.connect", "", "Sets the ZooKeeper connect string (ensemble). This parameter takes a comma-separated list of host:port pairs.").defaults("localhost:2181"),
	argOpt("zookeeper.session.timeout", "", "Sets the ZooKeeper session timeout.").typed("Integer").defaults("30000"),
	argOpt("zookeeper.connection.timeout", "", "Sets the ZooKeeper connection timeout.").typed("Integer").defaults("30000"),
	flagOpt("enable.path.check", "Checks if all the root paths exist in ZooKeeper before migration. If not, exit the command."),
	zkTLSConfigFileOption,
	helpOption,
}

// zkTLSConfigFileOption is the --zk-tls-config-file of kafka-configs and
// zookeeper-security-migration.
var zkTLSConfigFileOption = argOpt("zk-tls-config-file", "ZooKeeper TLS configuration", "Identifies the file where ZooKeeper client TLS connectivity properties are defined.  Any properties other than "+
	"zookeeper.clientCnxnSocket, zookeeper.ssl.cipher.suites, zookeeper.ssl.client.enable, zookeeper.ssl.crl.enable, zookeeper.ssl.enabled.protocols, "+
	"zookeeper.ssl.endpoint.identification.algorithm, zookeeper.ssl.keystore.location, zookeeper.ssl.keystore.password, zookeeper.ssl.keystore.type, "+
	"zookeeper.ssl.ocsp.enable, zookeeper.ssl.protocol, zookeeper.ssl.truststore.location, zookeeper.ssl.truststore.password, zookeeper.ssl.truststore.type are ignored.")

const zkSecurityMigrationUsage = "ZooKeeper Migration Tool Help. This tool updates the ACLs of znodes as part of the process of setting up ZooKeeper authentication."

// runZkSecurityMigration is zookeeper-security-migration.sh (ZkSecurityMigrator): it gives the
// chroot and every znode under Kafka's secure root paths the ACLs a broker with
// zookeeper.set.acl=true (secure) or false (unsecure) would create them with. It must run as the
// brokers' ZooKeeper identity (the SASL login of KAFKA_OPTS' JAAS file, or the client certificate
// of --zk-tls-config-file), since only the creator may change a secured znode's ACL.
func runZkSecurityMigration(args []string, stdout, stderr io.Writer) int {
	opts, err := parseToolOptions(args, zkSecurityMigrationOptions)
	if err == nil && helpNeeded(args, opts, zkSecurityMigrationUsage, zkSecurityMigrationOptions, stderr) {
		return 1
	}
	if err == nil {
		err = zkSecurityMigration(opts, stdout)
	}
	var usage *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errMigrationStopped):
	case errors.As(err, &usage):
		fmt.Fprintln(stderr, usage.msg)
		printUsage(stderr, zkSecurityMigrationUsage, zkSecurityMigrationOptions)
	default:
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
	}
	return 1
}

func zkSecurityMigration(opts toolOptions, stdout io.Writer) error {
	props := security.SystemProperties()
	tlsProps, err := zkTLSConfigFile(opts.value("zk-tls-config-file"))
	if err != nil {
		return err
	}
	tlsClientAuth := security.ZooKeeperTLSClientAuth(tlsProps)
	if props[security.JavaLoginConfigProp] == "" && !tlsClientAuth {
		return fmt.Errorf("No JAAS configuration file has been specified and no TLS client certificate has been specified. Please make sure that you set "+
			"the system property %s (-D%s=<file> in KAFKA_OPTS) or provide a ZooKeeper client TLS configuration via --zk-tls-config-file <filename> "+
			"identifying at least zookeeper.ssl.client.enable, zookeeper.clientCnxnSocket, and zookeeper.ssl.keystore.location",
			security.JavaLoginConfigProp, security.JavaLoginConfigProp)
	}
	login, err := security.ZooKeeperSASL(props)
	if err != nil {
		return err
	}
	if login == nil && !tlsClientAuth {
		fmt.Fprintf(stdout, "ERROR: Security isn't enabled, most likely the file isn't set properly: %s\n", props[security.JavaLoginConfigProp])
		return errMigrationStopped
	}
	zkTLS, err := security.ZooKeeperTLS(tlsProps)
	if err != nil {
		return err
	}
	var secure bool
	switch opts.value("zookeeper.acl") {
	case "secure":
		secure = true
	case "unsecure":
	default:
		return usageErrorf("Missing or invalid argument \"[zookeeper.acl]\": %q is neither secure nor unsecure", opts.value("zookeeper.acl"))
	}
	timeouts := map[string]time.Duration{"zookeeper.session.timeout": 30 * time.Second, "zookeeper.connection.timeout": 30 * time.Second}
	for name := range timeouts {
		if opts.has(name) {
			ms, err := opts.int32Option(name)
			if err != nil {
				return err
			}
			timeouts[name] = time.Duration(ms) * time.Millisecond
		}
	}
	sessionTimeout, connectionTimeout := timeouts["zookeeper.session.timeout"], timeouts["zookeeper.connection.timeout"]
	connect := opts.value("zookeeper.connect")
	if connect == "" {
		connect = "localhost:2181"
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectionTimeout)
	defer cancel()
	zkc, err := zkclient.Connect(ctx, zkclient.Config{Connect: connect, SessionTimeout: sessionTimeout, SASL: login, TLS: zkTLS, SecureACLs: secure})
	if err != nil {
		return fmt.Errorf("connect to ZooKeeper %s: %w", connect, err)
	}
	defer zkc.Close()
	return migrateZnodeACLs(zkc, opts.has("enable.path.check"), stdout)
}

// errMigrationStopped ends the tool with exit status 1 after it printed why, as Kafka's does.
var errMigrationStopped = errors.New("zookeeper-security-migration stopped")

// migrateZnodeACLs is ZkSecurityMigrator.run: the chroot's ACL, a warning for missing roots
// (and an exit with enable.path.check), then every root created if missing (bar /controller) and
// its whole tree given the client's default ACL.
func migrateZnodeACLs(zkc *zkclient.Client, pathCheck bool, stdout io.Writer) error {
	if err := zkc.SetDefaultACL("/"); err != nil {
		return err
	}
	var missing []string
	for _, p := range zkpaths.SecureRootPaths {
		ok, _, err := zkc.Exists(p)
		if err != nil {
			return err
		}
		if !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(stdout, "Warning: The following secure root paths do not exist in ZooKeeper: %s\n", strings.Join(missing, ","))
		fmt.Fprintln(stdout, "That might be due to an incorrect chroot is specified when executing the command.")
		if pathCheck {
			fmt.Fprintln(stdout, "Exit the command.")
			return errMigrationStopped
		}
	}
	for _, p := range zkpaths.SecureRootPaths {
		if p == zkpaths.Controller {
			if ok, _, err := zkc.Exists(p); err != nil || !ok {
				continue // the controller's ephemeral znode is not created by the tool
			}
		} else if err := zkc.CreateIfMissing(p, nil); err != nil {
			return err
		}
		if err := setACLsRecursively(zkc, p); err != nil {
			return err
		}
	}
	return nil
}

// setACLsRecursively gives path and everything under it the default ACL; a znode deleted
// meanwhile is skipped, as Kafka's callbacks skip NONODE.
func setACLsRecursively(zkc *zkclient.Client, path string) error {
	if err := zkc.SetDefaultACL(path); err != nil {
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		return err
	}
	children, _, err := zkc.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := setACLsRecursively(zkc, path+"/"+c); err != nil {
			return err
		}
	}
	return nil
}
