package adminzk

import (
	"errors"
	"fmt"
	"path"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/zkclient"
)

// Client writes admin changes through one ZooKeeper session. It holds no
// state of its own besides the session, so any number of goroutines may
// share one.
type Client struct {
	zk  *zkclient.Client
	log *zap.Logger

	// afterRead runs after each read of a znode this client will write back
	// conditionally, before the write; see SetAfterReadHook.
	afterRead func(path string)
}

// New returns a Client on an open session; log receives one line per change
// written (zap.NewNop() for a tool).
func New(zkc *zkclient.Client, log *zap.Logger) *Client {
	return &Client{zk: zkc, log: log}
}

// SetAfterReadHook sets a function called with the path after each read of an
// entity config or a topic assignment that will be written back, before the
// write. It exists for tests, which use it to let another writer in at
// exactly that point; set it before the client is shared.
func (c *Client) SetAfterReadHook(fn func(path string)) { c.afterRead = fn }

func (c *Client) read(p string) ([]byte, *zk.Stat, error) {
	data, stat, err := c.zk.Get(p)
	if (err == nil || errors.Is(err, zk.ErrNoNode)) && c.afterRead != nil {
		c.afterRead(p)
	}
	return data, stat, err
}

// create creates a znode, creating its missing parents (with no data) first
// when needed. It returns the created path (with the sequence number of a
// sequential znode).
func (c *Client) create(p string, data []byte, flags int32) (string, error) {
	created, err := c.zk.Create(p, data, flags, nil)
	if errors.Is(err, zk.ErrNoNode) {
		if err := c.zk.CreateIfMissing(path.Dir(p), nil); err != nil {
			return "", fmt.Errorf("create the parent of %s: %w", p, err)
		}
		created, err = c.zk.Create(p, data, flags, nil)
	}
	return created, err
}
