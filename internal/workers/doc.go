// Package workers runs a loop's independent iterations side by side on a bounded number of
// goroutines. It owns no state: ForEach hands out the indexes, the caller's function writes its
// result to its own index, and ForEach returns when every iteration has.
//
// The controller pipelines ZooKeeper requests with it, the broker applies a LeaderAndIsr request's
// partitions with it, and the log manager opens and flushes a directory's logs with
// num.recovery.threads.per.data.dir of them.
package workers
