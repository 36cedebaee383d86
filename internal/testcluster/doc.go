// Package testcluster is the one integration-test harness: it starts a real
// ZooKeeper (through zktest, one shared server per test binary with a fresh
// chroot per cluster) and N real brokers, in process or as separate zkafka
// processes when a test must kill -9 one. Waits are built on the one polling
// helper, internal/wait's For, so tests await conditions instead of sleeping.
package testcluster
