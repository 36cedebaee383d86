// Package freeport picks TCP ports on 127.0.0.1 for test processes that must be told their port
// before they start (ZooKeeper, broker processes, cluster.sh), so they cannot listen on port 0.
//
// A port the kernel handed out for port 0 comes from its ephemeral range, the same range it takes
// the local port of every outgoing connection from: released again, any process's next connect can
// take it before the server binds, and the start fails with "address already in use". The ports
// picked here lie outside /proc/sys/net/ipv4/ip_local_port_range, so only another listener that
// chose the same port by chance can collide.
package freeport
