package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// Where Debian's zookeeper package installs the real CLI (as scripts/lib.sh).
const (
	zkCliScript = "/usr/share/zookeeper/bin/zkCli.sh"
	zkJar       = "/usr/share/java/zookeeper.jar"
	slf4jNopJar = "/usr/share/java/slf4j-nop.jar"
)

// runZooKeeperShell is zookeeper-shell.sh: ZooKeeper's own CLI (zkCli.sh)
// on host:port[/chroot], interactive, or running the one command given after
// the address and exiting, as Kafka's wrapper of ZooKeeperMain does.
func runZooKeeperShell(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		fmt.Fprintln(stderr, "USAGE: zookeeper-shell zookeeper_host:port[/path] [args...]")
		return 1
	}
	if _, err := os.Stat(zkCliScript); err != nil {
		fmt.Fprintf(stderr, "zookeeper-shell: %s is missing; ./scripts/cluster.sh up installs ZooKeeper\n", zkCliScript)
		return 1
	}
	cmd := exec.Command(zkCliScript, append([]string{"-server", args[0]}, args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	// zkCli.sh puts CLIENT_JVMFLAGS after its own classpath, so this -cp
	// wins; slf4j-nop silences SLF4J's "no binding" warning. KAFKA_OPTS
	// reaches the JVM as kafka-run-class.sh passes it, a JAAS file's Client
	// login included.
	cp := "/etc/zookeeper/conf:" + zkJar
	if _, err := os.Stat(slf4jNopJar); err == nil {
		cp += ":" + slf4jNopJar
	}
	cmd.Env = append(os.Environ(), "CLIENT_JVMFLAGS="+os.Getenv("CLIENT_JVMFLAGS")+" "+os.Getenv("KAFKA_OPTS")+" -cp "+cp, "JMXDISABLE=true")
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintf(stderr, "zookeeper-shell: %v\n", err)
		return 1
	}
	return 0
}
