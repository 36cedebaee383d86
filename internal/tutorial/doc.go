// Package tutorial holds no code of its own: its tests run what a user runs.
// One test runs scripts/cluster.sh end to end (up, produce with kcat, kill a
// broker, consume, pause/resume, restart, down, reset); another runs every
// command of docs/TUTORIAL.md's tested code blocks and checks the output the
// tutorial shows. Both work in a sandbox: a temporary directory with the
// repository's scripts and configs and a freshly built zkafka, on free ports
// (ZKAFKA_BASE_PORT, ZKAFKA_ZK_PORT) so a developer's cluster on
// 9092-9094/2181 is left alone.
package tutorial
