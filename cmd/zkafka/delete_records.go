package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/zkafka/zkafka/kafka"
)

var deleteRecordsOptions = []optionSpec{
	argOpt("bootstrap-server", "server(s) to use for bootstrapping", "REQUIRED: The server to connect to."),
	argOpt("command-config", "command config property file path", "A property file containing configs to be passed to Admin Client."),
	argOpt("offset-json-file", "Offset json file path", "REQUIRED: The JSON file with offset per partition. The format to use is:\n"+
		`{"partitions":`+"\n"+`  [{"topic": "foo", "partition": 1, "offset": 1}],`+"\n"+` "version":1`+"\n}"),
	helpOption,
}

// runDeleteRecords is kafka-delete-records.sh: DeleteRecords for the
// partitions and offsets of a JSON file, printing each partition's new low
// watermark or its error as Kafka 2.8's DeleteRecordsCommand does.
func runDeleteRecords(args []string, stdout, stderr io.Writer) int {
	if opts, err := parseToolOptions(args, deleteRecordsOptions); err == nil && helpNeeded(args, opts,
		"This tool helps to delete records of the given partitions down to the specified offset.",
		deleteRecordsOptions, stderr) {
		return 1
	}
	if err := deleteRecords(args, stdout); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

func deleteRecords(args []string, stdout io.Writer) error {
	opts, err := parseToolOptions(args, deleteRecordsOptions)
	if err != nil {
		return err
	}
	if err := opts.checkRequired("bootstrap-server", "offset-json-file"); err != nil {
		return err
	}
	offsets, err := readDeleteRecordsFile(opts.value("offset-json-file"))
	if err != nil {
		return err
	}
	cl, adm, err := dialAdmin(opts.value("bootstrap-server"), opts.value("command-config"))
	if err != nil {
		return err
	}
	defer cl.Close()
	fmt.Fprintln(stdout, "Executing records delete operation")
	var os kadm.Offsets
	for _, o := range offsets {
		os.AddOffset(o.tp.Topic, o.tp.Partition, o.offset, -1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	results, err := adm.DeleteRecords(ctx, os)
	var shard *kadm.ShardErrors
	if err != nil && !errors.As(err, &shard) {
		return err
	}
	fmt.Fprintln(stdout, "Records delete operation completed:")
	for _, o := range offsets {
		r, ok := results.Lookup(o.tp.Topic, o.tp.Partition)
		switch {
		case !ok && err != nil:
			fmt.Fprintf(stdout, "partition: %s\terror: %s\n", o.tp, javaException(shardError(shard, o.tp)))
		case r.Err != nil:
			fmt.Fprintf(stdout, "partition: %s\terror: %s\n", o.tp, javaException(r.Err))
		default:
			fmt.Fprintf(stdout, "partition: %s\tlow_watermark: %d\n", o.tp, r.LowWatermark)
		}
	}
	return nil
}

// shardError is the error of the request that carried tp, when the admin
// client could not send it (the partition's leader is unknown, say).
func shardError(shard *kadm.ShardErrors, tp kafka.TopicPartition) error {
	if len(shard.Errs) > 0 {
		return shard.Errs[0].Err
	}
	return fmt.Errorf("no answer for %s", tp)
}

type deleteRecordsOffset struct {
	tp     kafka.TopicPartition
	offset int64
}

// readDeleteRecordsFile reads DeleteRecordsCommand's JSON:
// {"partitions":[{"topic":"foo","partition":1,"offset":1}],"version":1}.
func readDeleteRecordsFile(path string) ([]deleteRecordsOffset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Version    *int             `json:"version"`
		Partitions *json.RawMessage `json:"partitions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, errors.New("The input string is not a valid JSON")
	}
	if doc.Version != nil && *doc.Version != 1 {
		return nil, fmt.Errorf("Not supported version field value %d", *doc.Version)
	}
	if doc.Partitions == nil {
		return nil, errors.New("Missing partitions field")
	}
	var entries []map[string]json.RawMessage
	if err := json.Unmarshal(*doc.Partitions, &entries); err != nil {
		return nil, fmt.Errorf("partitions: %w", err)
	}
	var out []deleteRecordsOffset
	var dups []kafka.TopicPartition
	for _, e := range entries {
		var o deleteRecordsOffset
		for _, f := range []struct {
			name string
			dst  any
		}{{"topic", &o.tp.Topic}, {"partition", &o.tp.Partition}, {"offset", &o.offset}} {
			raw, ok := e[f.name]
			if !ok {
				return nil, fmt.Errorf("No such field exists: `%s`", f.name)
			}
			if err := json.Unmarshal(raw, f.dst); err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
		}
		if slices.ContainsFunc(out, func(p deleteRecordsOffset) bool { return p.tp == o.tp }) {
			if !slices.Contains(dups, o.tp) {
				dups = append(dups, o.tp)
			}
			continue
		}
		out = append(out, o)
	}
	if len(dups) > 0 {
		return nil, fmt.Errorf("Offset json file contains duplicate topic partitions: %s", joinPartitions(dups, ","))
	}
	return out, nil
}
