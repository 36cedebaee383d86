package main

import (
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/internal/zkclient"
)

// zkAfterReadHook is handed to the admin client of every --zookeeper tool
// (adminzk's SetAfterReadHook). It is nil except in tests, which use it to
// let another writer in between a tool's read of a znode and its write.
var zkAfterReadHook func(path string)

// newAdminZk is the one path by which a --zookeeper tool writes to
// ZooKeeper.
func newAdminZk(zkc *zkclient.Client) *adminzk.Client {
	admin := adminzk.New(zkc, zap.NewNop())
	admin.SetAfterReadHook(zkAfterReadHook)
	return admin
}
