// Package loglevels gives zap loggers log4j's per-logger levels, so a broker's levels can change
// while it runs (Kafka's BROKER_LOGGER configs, `kafka-configs --entity-type broker-loggers`).
//
// A Levels wraps the broker's zap core: every entry is checked against the level of its logger's
// name — the name's own, or the nearest dotted ancestor's that has one, or the root's — and the
// names of the loggers that have logged are remembered, as log4j's repository knows its loggers.
// Set and Unset change a name's level; Loggers lists every known name with its effective level.
package loglevels
