package adminzk

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/zkpaths"
)

// DeleteConsumerGroup removes /consumers/<g> and everything under it, as
// 0.10's AdminUtils.deleteConsumerGroupInZK does for a group of the
// ZooKeeper-based consumer. A group with registered consumers stays
// (ErrGroupActive); a missing one is ErrUnknownGroup.
func (c *Client) DeleteConsumerGroup(group string) error {
	path := zkpaths.ConsumerGroupPath(group)
	if ok, _, err := c.zk.Exists(path); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	} else if !ok {
		return adminErr(ErrUnknownGroup, kerr.GroupIDNotFound, "The group '%s' does not exist.", group)
	}
	ids, _, err := c.zk.Children(zkpaths.ConsumerIDsPath(group))
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("list %s: %w", zkpaths.ConsumerIDsPath(group), err)
	}
	if len(ids) > 0 {
		return adminErr(ErrGroupActive, kerr.NonEmptyGroup, "The group '%s' has active consumers.", group)
	}
	if err := c.deleteRecursive(path); err != nil {
		return err
	}
	c.log.Info("Deleted consumer group", zap.String("group", group))
	return nil
}

// deleteRecursive deletes a znode and its descendants, children first; a
// znode already gone is fine.
func (c *Client) deleteRecursive(path string) error {
	children, _, err := c.zk.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", path, err)
	}
	for _, child := range children {
		if err := c.deleteRecursive(path + "/" + child); err != nil {
			return err
		}
	}
	if err := c.zk.Delete(path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	return nil
}
