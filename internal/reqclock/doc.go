// Package reqclock measures a request's handler time as Kafka's request
// quota (request_percentage) counts it: the time the handler works, not the
// time it waits. Kafka's handler threads park a request that must wait (for
// replication, a long poll, a rebalance, new metadata) in a purgatory and
// count only the work before and after; here a handler's goroutine waits
// itself, so each place that blocks reports how long it did.
//
// The listener starts a Clock for each request and hands the handler a
// context carrying it; a wait reports through Waited(ctx, since), which does
// nothing for a context without a clock (a background task's). Busy is the
// handler's time so far less the waits.
package reqclock
