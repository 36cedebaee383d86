// Package tutorial holds no code of its own: its tests run what a user runs.
// One test runs scripts/cluster.sh end to end (up, produce with kcat, kill a
// broker, consume, pause/resume, restart, down, reset); others run every
// command of docs/TUTORIAL.md's tested code blocks, and of docs/SECURITY.md's
// on a secure cluster (cluster.sh up --secure), and check the output the doc
// shows. They work in a sandbox: a temporary directory with the
// repository's scripts and configs and a freshly built zkafka, on free ports
// (ZKAFKA_BASE_PORT, ZKAFKA_ZK_PORT) so a developer's cluster on
// 9092-9094/2181 is left alone.
//
// # How a block's output is checked
//
// In a tested block, "$ cmd" lines are commands and the lines after one are
// the command's whole output (stdout and stderr as a terminal shows them),
// compared line by line, in order: a missing, extra or different line fails.
// These are the only tolerances:
//
//   - A line "..." stands for one or more lines the doc leaves out; words
//     after it ("... 50 lines, one per partition") say what they are.
//   - <name> stands for one word that differs from run to run (an id, a pid,
//     a timestamp, an offset): it matches any run of non-blank characters
//     and remembers it; later in the step and in later steps, <name> is that
//     word and <name+1> that number plus one.
//   - Runs of blanks count as one space, and blank lines are not compared.
//   - zkCli.sh's chatter around its answer is not compared: its connection
//     lines ("Connecting to …", "WATCHER::", "WatchedEvent
//     state:SyncConnected …" and, with a login, "WatchedEvent
//     state:SaslAuthenticated …", printed from an event thread, so anywhere) and,
//     in the ZooKeeper container, the ERROR line that logs its normal exit.
//     The tutorial says so.
//   - The sandbox is not quite a reader's checkout: the doc's ports (2181,
//     9092-9094) are the sandbox's; the prefix of ZKAFKA_* settings that
//     `cluster.sh up` puts in its hints for the sandbox, which a reader does
//     not set, is removed from the output; and `cluster.sh up` runs the
//     test's build (ZKAFKA_BIN), so the doc's "building bin/zkafka" line is
//     not expected from it.
//
// Lines starting with "# " in a block are comments, shown but not compared.
package tutorial
