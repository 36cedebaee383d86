package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/internal/loglevels"
)

// overrides collects repeated --override key=value flags.
type overrides []string

func (o *overrides) String() string     { return strings.Join(*o, ",") }
func (o *overrides) Set(v string) error { *o = append(*o, v); return nil }

// runBroker is kafka-server-start.sh: a properties file, then KAFKA_*
// environment variables, then overrides (the file is optional when the
// environment names ZooKeeper, as in a container); it runs until SIGTERM or
// SIGINT and then shuts down cleanly.
func runBroker(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("broker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ov overrides
	fs.Var(&ov, "override", "key=value that overrides the properties file (repeatable)")
	var file string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zkafka broker: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	environ := os.Environ()
	props, err := brokerProperties(file, environ, ov)
	if errors.Is(err, brokerconfig.ErrConfig) {
		fmt.Fprintf(stderr, "zkafka broker: %v\n", err)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "zkafka broker: %v\n", err)
		return 1
	}
	if file == "" && props["zookeeper.connect"] == "" {
		fmt.Fprintln(stderr, "USAGE: zkafka broker server.properties [--override property=value]*")
		fmt.Fprintln(stderr, "       (or no file, with KAFKA_ZOOKEEPER_CONNECT and other KAFKA_* variables set)")
		return 2
	}
	cfg, err := brokerconfig.New(props)
	if err != nil {
		fmt.Fprintf(stderr, "zkafka broker: %v\n", err)
		return 1
	}
	logger, levels := newLogger()
	defer logger.Sync()
	if names := envNames(environ); len(names) > 0 {
		logger.Info("Properties from the environment", zap.Strings("variables", names))
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	s := broker.NewServer(cfg, logger)
	s.SetLogLevels(levels)
	if err := s.Start(ctx); err != nil {
		logger.Error("Broker failed to start", zap.Error(err))
		fmt.Fprintf(stderr, "zkafka broker: %v\n", err)
		return 1
	}
	select {
	case err := <-s.Fatal():
		// Kafka's Exit.halt(1): no controlled shutdown, the logs recover at the next start.
		logger.Error("Halting the broker", zap.Error(err))
		return 1
	case <-ctx.Done():
	}
	if err := s.Shutdown(); err != nil && !errors.Is(err, context.Canceled) {
		logger.Error("Shutdown finished with errors", zap.Error(err))
		return 1
	}
	return 0
}

// newLogger logs to stderr in a console layout close to Kafka's log4j lines:
// time, level, logger name, message, then fields; each logger's level can
// change at run time through levels (BROKER_LOGGER configs).
func newLogger() (*zap.Logger, *loglevels.Levels) {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	enc.EncodeLevel = zapcore.CapitalLevelEncoder
	enc.EncodeCaller = nil
	root := "INFO"
	if os.Getenv("ZKAFKA_LOG_LEVEL") == "debug" {
		root = "DEBUG"
	}
	levels, _ := loglevels.New(root) // root is valid
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(os.Stderr), zapcore.DebugLevel)
	return zap.New(levels.Wrap(core)), levels
}
