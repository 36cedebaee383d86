package zkclient

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// ServerMode asks the ZooKeeper server at addr (host:port) for its mode with the "srvr"
// four-letter word: "leader", "follower" or "standalone". A server that does not serve (no quorum,
// paused, down) gives an error; the answer waits 2 s at most, less if ctx says so.
func ServerMode(ctx context.Context, addr string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return "", err
	}
	if _, err := io.WriteString(conn, "srvr"); err != nil {
		return "", err
	}
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		if mode, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return mode, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	// A server without a quorum answers "This ZooKeeper instance is not currently serving requests".
	return "", fmt.Errorf("ZooKeeper on %s is not serving", addr)
}
