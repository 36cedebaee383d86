package zkpaths

import (
	"strings"
)

// EntityConfig is the data of /config/<entityType>/<entityName> (topics,
// clients, users, brokers). Values are strings, as in a properties file:
//
//	{"version":1,"config":{"cleanup.policy":"compact","retention.ms":"1000"}}
type EntityConfig struct {
	Config map[string]string
}

// Encode returns the version-1 JSON, config keys in byte order.
func (c EntityConfig) Encode() []byte {
	return newObject().int("version", 1).raw("config", stringMapJSON(c.Config)).bytes()
}

// DecodeEntityConfig reads an entity config znode. Empty data, which Kafka
// treats as "no overrides", decodes to an empty config. The map of the result
// is never nil.
func DecodeEntityConfig(data []byte) (EntityConfig, error) {
	c := EntityConfig{Config: map[string]string{}}
	if len(data) == 0 {
		return c, nil
	}
	o, err := parseObject("entity config", data)
	if err != nil {
		return EntityConfig{}, err
	}
	if _, err := o.version(); err != nil {
		return EntityConfig{}, err
	}
	if _, err := o.optional("config", &c.Config); err != nil {
		return EntityConfig{}, err
	}
	return c, nil
}

// ConfigChangeNotification is the data of a sequential
// /config/changes/config_change_NNNNNNNNNN, written as version 2 after an
// entity config changed; brokers then re-read that entity's config:
//
//	{"version":2,"entity_path":"topics/orders"}
//
// Version 1 ({"version":1,"entity_type":"topics","entity_name":"orders"})
// decodes too.
type ConfigChangeNotification struct {
	EntityPath string // "<entityType>/<entityName>", e.g. "brokers/<default>"
}

// EntityType is the first component of the entity path, e.g. "topics".
func (n ConfigChangeNotification) EntityType() string {
	t, _, _ := strings.Cut(n.EntityPath, "/")
	return t
}

// EntityName is the rest of the entity path, e.g. "orders", or
// "alice/clients/app" for a user+client quota.
func (n ConfigChangeNotification) EntityName() string {
	_, name, _ := strings.Cut(n.EntityPath, "/")
	return name
}

// Encode returns the version-2 JSON.
func (n ConfigChangeNotification) Encode() []byte {
	return newObject().int("version", 2).str("entity_path", n.EntityPath).bytes()
}

// DecodeConfigChangeNotification reads a config change notification, version
// 1 or 2.
func DecodeConfigChangeNotification(data []byte) (ConfigChangeNotification, error) {
	o, err := parseObject("config change notification", data)
	if err != nil {
		return ConfigChangeNotification{}, err
	}
	version, err := o.version()
	if err != nil {
		return ConfigChangeNotification{}, err
	}
	var n ConfigChangeNotification
	if version == 1 {
		var entityType, entityName string
		if err := o.required("entity_type", &entityType); err != nil {
			return ConfigChangeNotification{}, err
		}
		if err := o.required("entity_name", &entityName); err != nil {
			return ConfigChangeNotification{}, err
		}
		n.EntityPath = entityType + "/" + entityName
	} else if err := o.required("entity_path", &n.EntityPath); err != nil {
		return ConfigChangeNotification{}, err
	}
	if n.EntityType() == "" || n.EntityName() == "" {
		return ConfigChangeNotification{}, malformed(o.kind, "entity path %q lacks a type or a name", n.EntityPath)
	}
	return n, nil
}
