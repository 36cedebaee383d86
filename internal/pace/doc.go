// Package pace is the clock of the tools that run an experiment in time, `zkafka lab` and
// `zkafka chaos`: a wait that a context cuts short (Sleep), a condition checked until it holds or a
// timeout passes (Until), and the live progress line redrawn on a tick (Progress).
//
// These waits pace a run against a live cluster; tests synchronise with internal/wait instead.
package pace
