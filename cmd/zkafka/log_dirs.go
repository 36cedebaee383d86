package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var logDirsOptions = []optionSpec{
	argOpt("bootstrap-server", "The server(s) to use for bootstrapping", "REQUIRED: the server(s) to use for bootstrapping"),
	argOpt("command-config", "Admin client property file", "Property file containing configs to be passed to Admin Client."),
	flagOpt("describe", "Describe the specified log directories on the specified brokers."),
	argOpt("topic-list", "Topic list", `The list of topics to be queried in the form "topic1,topic2,topic3". All topics will be queried if no topic list is specified`),
	argOpt("broker-list", "Broker list", `The list of brokers to be queried in the form "0,1,2". All brokers in the cluster will be queried if no broker list is specified`),
	helpOption,
}

// runLogDirs is kafka-log-dirs.sh --describe: every log directory of the
// brokers asked (all of them by default) with its partitions, as Kafka 2.8's
// LogDirsCommand prints them — two lines, then one line of JSON.
func runLogDirs(args []string, stdout, stderr io.Writer) int {
	if opts, err := parseToolOptions(args, logDirsOptions); err == nil && helpNeeded(args, opts,
		"This tool helps to query log directory usage on the specified brokers.", logDirsOptions, stderr) {
		return 1
	}
	if err := logDirs(args, stdout); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// The JSON of LogDirsCommand.formatAsJson, fields in its order.
type (
	logDirsJSON struct {
		Version int                 `json:"version"`
		Brokers []brokerLogDirsJSON `json:"brokers"`
	}
	brokerLogDirsJSON struct {
		Broker  int32        `json:"broker"`
		LogDirs []logDirJSON `json:"logDirs"`
	}
	logDirJSON struct {
		LogDir     string              `json:"logDir"`
		Error      *string             `json:"error"`
		Partitions []logDirReplicaJSON `json:"partitions"`
	}
	logDirReplicaJSON struct {
		Partition string `json:"partition"`
		Size      int64  `json:"size"`
		OffsetLag int64  `json:"offsetLag"`
		IsFuture  bool   `json:"isFuture"`
	}
)

func logDirs(args []string, stdout io.Writer) error {
	opts, err := parseToolOptions(args, logDirsOptions)
	if err != nil {
		return err
	}
	if err := opts.checkRequired("bootstrap-server", "describe"); err != nil {
		return err
	}
	var topics []string
	for t := range strings.SplitSeq(opts.value("topic-list"), ",") {
		if t != "" {
			topics = append(topics, t)
		}
	}
	cl, _, err := dialAdmin(opts.value("bootstrap-server"), opts.value("command-config"))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	var brokers []int32
	if opts.has("broker-list") {
		for b := range strings.SplitSeq(opts.value("broker-list"), ",") {
			if b == "" {
				continue
			}
			id, err := strconv.ParseInt(b, 10, 32)
			if err != nil {
				return fmt.Errorf("For input string: %q", b)
			}
			brokers = append(brokers, int32(id))
		}
	} else {
		md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		for _, b := range md.Brokers {
			brokers = append(brokers, b.NodeID)
		}
		slices.Sort(brokers)
	}
	fmt.Fprintln(stdout, "Querying brokers for log directories information")
	out := logDirsJSON{Version: 1, Brokers: []brokerLogDirsJSON{}}
	for _, id := range brokers {
		raw, err := cl.Broker(int(id)).Request(ctx, kmsg.NewPtrDescribeLogDirsRequest())
		if err != nil {
			return fmt.Errorf("describe the log dirs of broker %d: %w", id, err)
		}
		b := brokerLogDirsJSON{Broker: id, LogDirs: []logDirJSON{}}
		for _, d := range raw.(*kmsg.DescribeLogDirsResponse).Dirs {
			dir := logDirJSON{LogDir: d.Dir, Partitions: []logDirReplicaJSON{}}
			if err := kerr.ErrorForCode(d.ErrorCode); err != nil {
				class, _, _ := strings.Cut(javaException(err), ":")
				dir.Error = &class
			}
			for _, t := range d.Topics {
				if len(topics) > 0 && !slices.Contains(topics, t.Topic) {
					continue
				}
				for _, p := range t.Partitions {
					dir.Partitions = append(dir.Partitions, logDirReplicaJSON{
						Partition: t.Topic + "-" + strconv.Itoa(int(p.Partition)), Size: p.Size, OffsetLag: p.OffsetLag, IsFuture: p.IsFuture,
					})
				}
			}
			b.LogDirs = append(b.LogDirs, dir)
		}
		out.Brokers = append(out.Brokers, b)
	}
	var ids []string
	for _, id := range brokers {
		ids = append(ids, strconv.Itoa(int(id)))
	}
	fmt.Fprintf(stdout, "Received log directory information from brokers %s\n", strings.Join(ids, ","))
	data, err := json.Marshal(out)
	if err != nil {
		return errors.Join(errors.New("encode the log dirs"), err)
	}
	fmt.Fprintln(stdout, string(data))
	return nil
}
