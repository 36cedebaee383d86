package main

import (
	"fmt"
	"maps"
	"net"
	"sort"
	"strings"

	"github.com/zkafka/zkafka/brokerconfig"
)

// envPrefix marks the environment variables that become broker properties,
// as in Confluent's cp-kafka and wurstmeister's images.
const envPrefix = "KAFKA_"

// envSkipped are KAFKA_* variables the images read for the JVM or log4j, not
// for server.properties; they are ignored here as the images ignore them.
var envSkipped = map[string]bool{
	"KAFKA_HEAP_OPTS": true, "KAFKA_OPTS": true, "KAFKA_VERSION": true, "KAFKA_HOME": true,
	"KAFKA_JVM_PERFORMANCE_OPTS": true, "KAFKA_GC_LOG_OPTS": true, "KAFKA_DEBUG": true,
	"KAFKA_TOOLS_LOG4J_LOGLEVEL": true,
}

// envSkippedPrefixes are the families of such variables (KAFKA_JMX_PORT,
// KAFKA_LOG4J_LOGGERS, ...).
var envSkippedPrefixes = []string{"KAFKA_JMX_", "KAFKA_LOG4J_"}

// envKey maps a KAFKA_* variable name to its property key: the prefix is
// dropped, the rest lowercased, "___" becomes "-", "__" becomes "_" and "_"
// becomes "." (KAFKA_ZOOKEEPER_CONNECT → zookeeper.connect). ok is false for
// variables that are not properties.
func envKey(name string) (key string, ok bool) {
	if !strings.HasPrefix(name, envPrefix) || envSkipped[name] || len(name) == len(envPrefix) {
		return "", false
	}
	for _, p := range envSkippedPrefixes {
		if strings.HasPrefix(name, p) {
			return "", false
		}
	}
	rest := strings.ToLower(name[len(envPrefix):])
	var b strings.Builder
	for i := 0; i < len(rest); {
		switch {
		case strings.HasPrefix(rest[i:], "___"):
			b.WriteByte('-')
			i += 3
		case strings.HasPrefix(rest[i:], "__"):
			b.WriteByte('_')
			i += 2
		case rest[i] == '_':
			b.WriteByte('.')
			i++
		default:
			b.WriteByte(rest[i])
			i++
		}
	}
	return b.String(), true
}

// envProperties returns the properties that KAFKA_* variables of environ
// (os.Environ's form) set. Empty values count as unset, as a compose file's
// `KAFKA_X: ""` usually means "leave the default".
func envProperties(environ []string) map[string]string {
	props := map[string]string{}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		key, ok := envKey(name)
		if !ok || strings.TrimSpace(value) == "" {
			continue
		}
		props[key] = strings.TrimSpace(value)
	}
	return props
}

// brokerProperties layers a broker's configuration as the container images
// and kafka-server-start.sh do: the properties file (optional), then KAFKA_*
// environment variables, then --override flags. When the environment gives
// advertised.listeners but no layer gives listeners, the listeners bind the
// same names and ports on every interface, as cp-kafka derives them.
func brokerProperties(file string, environ, overrides []string) (map[string]string, error) {
	props := map[string]string{}
	if file != "" {
		fromFile, err := brokerconfig.ReadPropertiesFile(file)
		if err != nil {
			return nil, err
		}
		maps.Copy(props, fromFile)
	}
	env := envProperties(environ)
	maps.Copy(props, env)
	extra, err := brokerconfig.ParseOverrides(overrides)
	if err != nil {
		return nil, err
	}
	maps.Copy(props, extra)
	if _, ok := props["listeners"]; !ok && env["advertised.listeners"] != "" && env["advertised.listeners"] == props["advertised.listeners"] {
		listeners, err := bindAllListeners(env["advertised.listeners"])
		if err != nil {
			return nil, err
		}
		props["listeners"] = listeners
	}
	return props, nil
}

// bindAllListeners turns NAME://host:port,... into NAME://0.0.0.0:port,...
func bindAllListeners(advertised string) (string, error) {
	var out []string
	for _, entry := range strings.Split(advertised, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, addr, ok := strings.Cut(entry, "://")
		if !ok {
			return "", fmt.Errorf("KAFKA_ADVERTISED_LISTENERS entry %q is not NAME://host:port: %w", entry, brokerconfig.ErrConfig)
		}
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return "", fmt.Errorf("KAFKA_ADVERTISED_LISTENERS entry %q: %v: %w", entry, err, brokerconfig.ErrConfig)
		}
		out = append(out, name+"://"+net.JoinHostPort("0.0.0.0", port))
	}
	return strings.Join(out, ","), nil
}

// envNames lists the KAFKA_* variables of environ that become properties,
// sorted, for the start-up log.
func envNames(environ []string) []string {
	var names []string
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if _, ok := envKey(name); ok && strings.TrimSpace(value) != "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
