// Package dockertest runs the repository's compose files for real, for tests:
// it builds the offline images (scripts/docker-images.sh), starts a compose
// project under a name and host ports of its own, waits for the services'
// healthchecks and takes the project down with its volumes when the test
// ends.
//
// Where no Docker engine answers, the tests that use it are skipped with one
// line saying so; with ZKAFKA_REQUIRE_DOCKER=1 (as .ci/run sets it) a missing
// engine fails them instead.
//
// The package's own tests are the teaching cluster's end-to-end checks:
// listeners seen from the host and from inside the network, container faults
// (kill, pause, network disconnect), restarts with and without volumes, the
// ZooKeeper ensemble, and the secure cluster of docker-compose.secure.yml.
package dockertest
