// Package adminzk is Kafka's AdminZkClient: the one path by which brokers and
// the --zookeeper tools change cluster metadata in ZooKeeper.
//
// It owns every administrative write: creating a topic (its config, then its
// assignment with a new topic id), adding partitions to a topic, changing an
// entity config (topics, brokers, <default>, users, clients) with the change
// notification that tells every broker, marking a topic for deletion, and
// writing the reassignment and preferred-replica-election requests the
// controller watches, and deleting an inactive group of the ZooKeeper-based
// consumer. It never acts on the cluster itself: the controller's
// and the brokers' watches do the rest.
//
// Data flow: a caller validates what only it can (a broker its log configs
// and live brokers, a tool its command line), then calls one method here.
// Each method checks what Kafka's AdminZkClient checks against ZooKeeper's
// current state and writes the znodes with zkpaths' codecs:
//
//	CreateTopic          → /config/topics/<t>, /brokers/topics/<t>
//	AddPartitions        → /brokers/topics/<t> (at the version read)
//	ChangeEntityConfig   → /config/<type>/<name> (at the version read), /config/changes/config_change_N
//	MarkTopicForDeletion → /admin/delete_topics/<t>
//	WriteReassignment    → /admin/reassign_partitions
//	WritePreferredReplicaElection → /admin/preferred_replica_election
//	DeleteConsumerGroup  → /consumers/<g> removed
//	ACLStore (acl.Store) → /kafka-acl[-extended/prefixed]/<Type>/<name> (at the version read), /kafka-acl[-extended]-changes/acl_changes_N
//
// Read-modify-write is conditional: an entity config or an assignment is
// written back only at the zkVersion it was read at; when another writer got
// there first (BadVersion, or a create that finds the znode), the method
// re-reads and applies the caller's change again, so concurrent writers to
// different keys of one entity never lose each other's updates. Kafka itself
// writes entity configs at any version; this is a deliberate improvement.
//
// Failures Kafka reports as API exceptions are *Error values: they match
// both a sentinel of this package and the Kafka error code (kerr) a broker
// answers with, and their text is the message a client or tool prints.
package adminzk
