// Package zkclient is zkafka's ZooKeeper session: the one place a broker, the controller or a tool
// talks to ZooKeeper.
//
// It wraps github.com/go-zookeeper/zk and adds what Kafka's ZooKeeperClient adds to the Java client:
//
//   - A chroot. Kafka's zookeeper.connect may end in a path ("h1:2181,h2:2181/kafka"). go-zookeeper
//     has no chroot, so Connect splits it off, creates it if missing, prefixes every request path
//     with it (Multi ops included) and strips it from the paths the caller gets back: created
//     sequential names, Multi results and watch events. Callers only ever see chroot-relative paths.
//   - Session lifecycle callbacks. When the server expires the session, ephemeral znodes (a broker's
//     registration, /controller) and all watches are gone. go-zookeeper then opens a brand-new
//     session on its own. The Client reports both steps: OnSessionExpired when the old session is
//     gone, OnNewSession when its replacement is established, so that the broker re-registers and
//     the controller re-runs its election, as Kafka's KafkaZkClient state-change handlers do.
//   - Logs through zap (logger "zk") instead of go-zookeeper's standard-library logger.
//   - SASL, TLS and ACLs. go-zookeeper has no SASL, so the same dialer wrapper that reads the
//     ConnectResponse runs a DIGEST-MD5 exchange (the JAAS "Client" context's login) on each new
//     connection before go-zookeeper may send anything on it; with a TLS config the dialer
//     connects to the secure client port, and a client certificate is the session's identity. With SecureACLs every znode created
//     without an explicit ACL gets Kafka's DefaultACL (zookeeper.set.acl).
//
// Data flow: go-zookeeper delivers session events through an event callback on its own goroutines;
// the callback only appends them to a queue. One wrapper goroutine drains the queue, tracks the
// session id and runs the registered callbacks in order. Watch events travel on the one-shot
// channels returned by GetW, ExistsW and ChildrenW; with a chroot, a small goroutine per watch
// rewrites the path and ends when go-zookeeper closes the channel (on firing, expiry or Close).
//
// ForceExpire exists for tests: ZooKeeper expires a session when a second connection presents the
// same session id and password and then closes the session. The password is private to
// go-zookeeper, so the Client reads it from the ConnectResponse through a dialer wrapper, and
// speaks the few bytes of the ZooKeeper protocol needed for the second connection itself.
package zkclient
