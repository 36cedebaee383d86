// Package ui is the live teaching dashboard behind `zkafka ui`: one page that
// shows the ZooKeeper-era machinery moving — the controller and its epoch,
// every broker's registration, every partition's leader, ISR and epochs, both
// kinds of consumer group, the znode tree itself — and a timeline of every
// change as it happens.
//
// Data flows one way, from the cluster to the pages:
//
//	ZooKeeper ──watch fired──▶ queue ──▶ Model's loop: re-read that znode
//	    (GetW/ChildrenW, which arms the watch again) ──▶ mirror diff
//	    ──▶ publish: the shared copy of the tree, the sections it touches,
//	        timeline events (describe: a pure function of old and new znode)
//	brokers ──poller: Metadata, ListOffsets (per replica, as the debugging
//	    consumer), ListGroups, DescribeGroups, OffsetFetch, Fetch of
//	    __consumer_offsets for generations──▶ applyPoll ──▶ sections, events
//	Model ──notify──▶ one goroutine per open page (Server.events): renders
//	    each changed section with html/template (once per revision, shared by
//	    every page) and sends it as a Server-Sent Event
//
// The Model is the one watch-driven model of the cluster shared by every
// page: it mirrors the whole tree with one data watch and one child watch per
// znode (mirror.go), so when nothing changes it sends ZooKeeper nothing, and
// a change costs one read, however many pages are open. Pages never reach
// ZooKeeper: the explorer reads the mirror. The mirror's loop owns it alone
// (watches only enqueue, as in the controller); what pages read is the copy
// published under Model.mu, whose znodes are never modified once published.
//
// Reconnection: a lost connection keeps the session and its watches
// (go-zookeeper sets them again); an expired session loses them, and the new
// session reads the whole tree again and reports the differences as events.
// A ZooKeeper that cannot be reached shows as such with the last state read,
// never as an empty cluster; a broker that does not answer the poller shows
// as not answering. The poller redials brokers after a restart. Pages
// reconnect through EventSource and resume from the last event id they saw
// ("<boot>.<revision>.<sequence>"); the timeline lives in the server, so it
// survives a page reload.
//
// Safety: the server listens on loopback unless told otherwise; every
// fragment comes from html/template, so znode data is escaped wherever it
// shows, and the Content-Security-Policy admits only the page's own script.
// The model's ZooKeeper interface (zkReader) has no write method. Actions
// (actions.go: cluster.sh kill/pause/resume/restart, produce sample records,
// start a lab scenario) exist only with --allow-actions against a running
// local cluster.sh cluster; otherwise every /actions/ request is answered
// 403. An action must be a POST with the page's X-Zkafka-Action header, sent
// to a loopback name and, if the browser sends an Origin, from this host.
package ui
