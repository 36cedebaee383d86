package adminzk

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/zkpaths"
)

// FetchEntityConfig returns the config of /config/<entityType>/<entityName>;
// a missing znode is an empty config. The map is never nil.
func (c *Client) FetchEntityConfig(entityType, entityName string) (map[string]string, error) {
	cfg, _, err := c.fetchEntityConfig(zkpaths.EntityConfigPath(entityType, entityName), c.zk.Get)
	return cfg, err
}

// fetchEntityConfig reads a config znode with get; version -1 means the
// znode does not exist.
func (c *Client) fetchEntityConfig(path string, get func(string) ([]byte, *zk.Stat, error)) (map[string]string, int32, error) {
	data, stat, err := get(path)
	if errors.Is(err, zk.ErrNoNode) {
		return map[string]string{}, -1, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	ec, err := zkpaths.DecodeEntityConfig(data)
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	return ec.Config, stat.Version, nil
}

// ChangeEntityConfig changes the config of an entity (a topic, a broker id,
// zkpaths.DefaultEntity, a user or a client) as Kafka's changeEntityConfig
// does, then creates the sequential notification
// /config/changes/config_change_ naming the entity, which every broker
// watches.
//
// update gets the stored config (empty when there is none) to change in
// place, and reports whether it changed anything; nothing is written when
// it did not, and its error is returned as it is. The config is written
// back at the version it was read at; when another writer changed or
// created it meanwhile, it is read again and update runs again on the new
// config, so no writer's change is lost.
func (c *Client) ChangeEntityConfig(entityType, entityName string, update func(config map[string]string) (bool, error)) error {
	path := zkpaths.EntityConfigPath(entityType, entityName)
	var written map[string]string
	for {
		cfg, version, err := c.fetchEntityConfig(path, c.read)
		if err != nil {
			return err
		}
		if changed, err := update(cfg); err != nil || !changed {
			return err
		}
		data := zkpaths.EntityConfig{Config: cfg}.Encode()
		if version < 0 {
			_, err = c.create(path, data, 0)
		} else {
			_, err = c.zk.Set(path, data, version)
		}
		// Created, changed or deleted by another writer since the read.
		if errors.Is(err, zk.ErrNodeExists) || errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		written = cfg
		break
	}
	n := zkpaths.ConfigChangeNotification{EntityPath: entityType + "/" + entityName}
	if _, err := c.create(zkpaths.ConfigChangePrefix, n.Encode(), zk.FlagSequence); err != nil {
		return fmt.Errorf("create a config change notification for %s: %w", n.EntityPath, err)
	}
	c.log.Info("Changed entity config", zap.String("entity-path", n.EntityPath), zap.String("config", FormatConfig(LoggableConfig(written))))
	return nil
}

// ReplaceEntityConfig makes config the entity's whole config (Kafka's
// AlterConfigs), with the notification.
func (c *Client) ReplaceEntityConfig(entityType, entityName string, config map[string]string) error {
	return c.ChangeEntityConfig(entityType, entityName, func(cfg map[string]string) (bool, error) {
		clear(cfg)
		maps.Copy(cfg, config)
		return true, nil
	})
}

// FormatConfig writes a config as sorted key=value pairs, for log lines.
func FormatConfig(cfg map[string]string) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(cfg)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + cfg[k])
	}
	return b.String()
}
