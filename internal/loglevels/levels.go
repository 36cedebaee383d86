package loglevels

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"go.uber.org/zap/zapcore"
)

// Root is the name of the root logger, as log4j calls it.
const Root = "root"

// Valid are the levels a logger can be set to, Kafka's LogLevelConfig.VALID_LOG_LEVELS.
var Valid = []string{"FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"}

// zapLevel maps a log4j level onto zap's; zap has nothing below debug, so TRACE is DEBUG.
func zapLevel(level string) zapcore.Level {
	switch level {
	case "FATAL":
		return zapcore.FatalLevel
	case "ERROR":
		return zapcore.ErrorLevel
	case "WARN":
		return zapcore.WarnLevel
	case "INFO":
		return zapcore.InfoLevel
	}
	return zapcore.DebugLevel
}

// Levels holds the level of the root logger and of every logger given one.
type Levels struct {
	mu    sync.RWMutex
	set   map[string]string // a log4j level per logger name; Root always has one
	known map[string]bool   // every logger name that has logged
	min   zapcore.Level     // the lowest level of any logger: what the core must let through
}

// New starts with the root logger at root (one of Valid).
func New(root string) (*Levels, error) {
	if !slices.Contains(Valid, root) {
		return nil, fmt.Errorf("log level %q is not one of %s", root, strings.Join(Valid, ", "))
	}
	l := &Levels{set: map[string]string{Root: root}, known: map[string]bool{}}
	l.min = zapLevel(root)
	return l, nil
}

// levelLocked is a name's effective level: its own, the nearest dotted ancestor's, or the root's.
func (l *Levels) levelLocked(name string) string {
	for n := name; n != ""; {
		if lv, ok := l.set[n]; ok {
			return lv
		}
		i := strings.LastIndexByte(n, '.')
		if i < 0 {
			break
		}
		n = n[:i]
	}
	return l.set[Root]
}

// Exists reports whether a logger of that name has logged (the root always exists).
func (l *Levels) Exists(name string) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return name == Root || l.known[name]
}

// Set gives a logger a level (one of Valid).
func (l *Levels) Set(name, level string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.set[name] = level
	l.resetMinLocked()
}

// Unset takes a logger's own level away, so it inherits again; the root keeps its own.
func (l *Levels) Unset(name string) {
	if name == Root {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.set, name)
	l.resetMinLocked()
}

func (l *Levels) resetMinLocked() {
	l.min = zapcore.FatalLevel
	for _, lv := range l.set {
		l.min = min(l.min, zapLevel(lv))
	}
}

// Loggers is every known logger with its effective level, the root among them.
func (l *Levels) Loggers() map[string]string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := map[string]string{Root: l.set[Root]}
	for n := range l.known {
		out[n] = l.levelLocked(n)
	}
	for n := range maps.Keys(l.set) {
		if _, ok := out[n]; !ok {
			out[n] = l.set[n]
		}
	}
	return out
}

// enabled reports whether an entry of logger name at level lv is logged, and remembers the name.
func (l *Levels) enabled(name string, lv zapcore.Level) bool {
	l.mu.RLock()
	known := l.known[name]
	ok := lv >= zapLevel(l.levelLocked(name))
	l.mu.RUnlock()
	if !known && name != "" {
		l.mu.Lock()
		l.known[name] = true
		l.mu.Unlock()
	}
	return ok
}

func (l *Levels) minLevel() zapcore.Level {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.min
}

// Wrap returns a core that logs through inner what each entry's logger level allows. inner should
// let everything through (zapcore.DebugLevel): the levels here decide.
func (l *Levels) Wrap(inner zapcore.Core) zapcore.Core { return &core{inner: inner, l: l} }

type core struct {
	inner zapcore.Core
	l     *Levels
}

func (c *core) Enabled(lv zapcore.Level) bool { return lv >= c.l.minLevel() && c.inner.Enabled(lv) }

func (c *core) With(fields []zapcore.Field) zapcore.Core {
	return &core{inner: c.inner.With(fields), l: c.l}
}

func (c *core) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if !c.l.enabled(e.LoggerName, e.Level) {
		return ce
	}
	return c.inner.Check(e, ce)
}

func (c *core) Write(e zapcore.Entry, fields []zapcore.Field) error { return c.inner.Write(e, fields) }
func (c *core) Sync() error                                         { return c.inner.Sync() }
