package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zkafka/zkafka/ui"
)

// runUI is `zkafka ui`: the live teaching dashboard (package ui).
func runUI(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ui", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		zookeeper = fs.String("zookeeper", "localhost:2181", "ZooKeeper connect string, with the cluster's chroot if it has one")
		bootstrap = fs.String("bootstrap-server", "localhost:9092", "brokers to ask for the others' addresses")
		listen    = fs.String("listen", "127.0.0.1:8080", "address to serve the dashboard on")
		allow     = fs.Bool("allow-actions", false, "offer kill, pause, resume, restart, produce and lab runs (a local cluster.sh cluster only)")
		script    = fs.String("cluster-script", "scripts/cluster.sh", "the cluster.sh of the local cluster, for --allow-actions")
		poll      = fs.Duration("poll-interval", 2*time.Second, "how often the brokers are asked for offsets and groups")
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: zkafka ui [--zookeeper h:2181] [--bootstrap-server h:9092] [--listen 127.0.0.1:8080] [--allow-actions]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zkafka ui: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	brokers := strings.Split(*bootstrap, ",")
	var actions *ui.Actions
	if *allow {
		host, _, err := net.SplitHostPort(*listen)
		if err != nil || !ui.IsLoopback(host) {
			fmt.Fprintf(stderr, "zkafka ui: --allow-actions serves on loopback only, not %s\n", *listen)
			return 2
		}
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintf(stderr, "zkafka ui: %v\n", err)
			return 1
		}
		actions, err = ui.NewActions(ctx, ui.ActionOptions{Script: *script, ZooKeeper: *zookeeper, Bootstrap: brokers, Zkafka: exe})
		if err != nil {
			fmt.Fprintf(stderr, "zkafka ui: %v\n", err)
			return 1
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "zkafka ui: %v\n", err)
		return 1
	}
	logger, _ := newLogger()
	defer logger.Sync()
	m := ui.NewModel(ui.Options{ZooKeeper: *zookeeper, Bootstrap: brokers, PollInterval: *poll, Logger: logger})
	srv := &http.Server{
		Handler:           ui.NewServer(m, actions).Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		// Event streams end with ctx, so Shutdown does not wait for them.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	var wg sync.WaitGroup
	wg.Go(func() { m.Run(ctx) })
	fmt.Fprintf(stdout, "zkafka ui: http://%s/ (ZooKeeper %s, brokers %s, actions %s)\n", ln.Addr(), *zookeeper, *bootstrap, map[bool]string{true: "on", false: "off"}[*allow])
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	code := 0
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		fmt.Fprintf(stderr, "zkafka ui: %v\n", err)
		code = 1
		stop()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	wg.Wait()
	return code
}
