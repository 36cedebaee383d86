// Command zkafka-bench is `zkafka bench` with franz-go's in-memory kfake
// cluster beside it: --compare-kfake runs the same load against both in one
// process and prints zkafka's rates as ratios of kfake's, which is how the
// project's performance targets are stated. It is a separate binary so that
// the broker's own binary does not carry a second Kafka implementation.
//
//	go run ./cmd/zkafka-bench --bootstrap-server localhost:9092 --compare-kfake
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/zkafka/zkafka/internal/bench"
)

func main() {
	os.Exit(bench.Main(os.Args[1:], os.Stdout, os.Stderr, kfakeReference))
}

// kfakeReference runs the load against three in-process kfake brokers on
// random ports, capped at Kafka 2.8's API versions so that they speak what
// zkafka speaks; the cluster is closed before Run returns.
var kfakeReference = &bench.Reference{
	Name: "kfake",
	Run: func(ctx context.Context, opts bench.Options, log io.Writer) (bench.Result, error) {
		cluster, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(kversion.V2_8_0()))
		if err != nil {
			return bench.Result{}, fmt.Errorf("bench: start kfake cluster: %w", err)
		}
		defer cluster.Close()
		return bench.RunAgainst(ctx, opts, log, "kfake", cluster.ListenAddrs())
	},
}
