package storage

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MetaPropertiesFile is the file in every log directory that ties it to a broker and a cluster.
const MetaPropertiesFile = "meta.properties"

// MetaProperties is the content of meta.properties in its ZooKeeper-mode form (version 0).
type MetaProperties struct {
	BrokerID  int32
	ClusterID string // empty in directories written before Kafka 0.10.1
}

// ReadMetaProperties reads dir/meta.properties. A missing file gives an error that matches
// os.ErrNotExist, which a broker takes as a fresh directory.
func ReadMetaProperties(dir string) (MetaProperties, error) {
	path := filepath.Join(dir, MetaPropertiesFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return MetaProperties{}, err
	}
	props := parseProperties(data)
	if v := props["version"]; v != "0" {
		return MetaProperties{}, fmt.Errorf("%s: version %q is not 0 (ZooKeeper mode)", path, v)
	}
	id, err := strconv.ParseInt(props["broker.id"], 10, 32)
	if err != nil || id < 0 {
		return MetaProperties{}, fmt.Errorf("%s: invalid broker.id %q", path, props["broker.id"])
	}
	return MetaProperties{BrokerID: int32(id), ClusterID: props["cluster.id"]}, nil
}

// WriteMetaProperties writes dir/meta.properties atomically in the layout java.util.Properties.store
// gives Kafka's:
//
//	#
//	#Tue Sep 14 13:10:12 UTC 2021
//	cluster.id=3XPxd8lCSW2yPhAFxGP0Ig
//	version=0
//	broker.id=1
func WriteMetaProperties(dir string, p MetaProperties) error {
	var buf bytes.Buffer
	buf.WriteString("#\n#" + time.Now().Format("Mon Jan 02 15:04:05 MST 2006") + "\n")
	if p.ClusterID != "" {
		buf.WriteString("cluster.id=" + escapeProperty(p.ClusterID) + "\n")
	}
	buf.WriteString("version=0\n")
	buf.WriteString("broker.id=" + strconv.FormatInt(int64(p.BrokerID), 10) + "\n")
	return writeFileAtomic(filepath.Join(dir, MetaPropertiesFile), buf.Bytes())
}

// parseProperties reads the subset of the .properties format that Kafka writes: one key=value (or
// key:value) per line, '#' and '!' comments, backslash escapes of single characters.
func parseProperties(data []byte) map[string]string {
	props := make(map[string]string)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		key, value := splitProperty(line)
		props[key] = value
	}
	return props
}

// splitProperty splits at the first unescaped '=' or ':' and unescapes both halves.
func splitProperty(line string) (key, value string) {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '=', ':':
			return unescapeProperty(strings.TrimSpace(line[:i])), unescapeProperty(strings.TrimLeft(line[i+1:], " \t\f"))
		}
	}
	return unescapeProperty(strings.TrimSpace(line)), ""
}

func unescapeProperty(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			c = s[i]
			switch c {
			case 't':
				c = '\t'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 'f':
				c = '\f'
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// escapeProperty escapes what Properties.store escapes in values.
func escapeProperty(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '=', ':', '#', '!':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
