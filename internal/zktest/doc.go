// Package zktest runs a real Apache ZooKeeper server for tests and test harnesses.
//
// It owns the one way this repository starts ZooKeeper outside scripts/cluster.sh: it writes a
// standalone zoo.cfg into a directory, launches the JVM from the Debian package
// (/usr/share/java/zookeeper.jar, installed by ./scripts/test.sh) in its own process group, and
// declares the server ready only when the "srvr" four-letter word answers with a "Mode:" line
// ("ruok" answers before the server accepts sessions).
//
// Data flow: Options → zoo.cfg + data dir → java QuorumPeerMain → readiness poll → *Server, whose
// Connect string goes into zkclient.Config.Connect. Stop sends SIGTERM, Kill sends SIGKILL (a crash),
// and Restart starts the same configuration again on the same port and data directory, so znodes
// survive a restart.
//
// Tests call Start, which stops the server in t.Cleanup. Other harnesses (internal/testcluster)
// call StartServer and own the Stop. Packages whose tests only need an isolated namespace can share
// one server per test binary: their TestMain calls Main, and each test calls NewChroot to get a
// fresh "/t-<random>" chroot on that server.
package zktest
