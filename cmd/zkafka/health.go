package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/security"
	"github.com/zkafka/zkafka/wire"
)

// runBrokerHealth is the container healthcheck: the broker answers
// ApiVersions, its Metadata lists the broker itself (so it is registered in
// /brokers/ids and its metadata cache is fed) and names a controller. Exit 0
// means healthy, 1 not (yet), 2 a usage error.
func runBrokerHealth(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("broker-health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bootstrap := fs.String("bootstrap-server", "localhost:9092", "the broker to check, host:port")
	brokerID := fs.Int("broker-id", -1, "the id the broker must be registered under (default: $KAFKA_BROKER_ID, else any)")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	commandConfig := fs.String("command-config", "", "a client properties file with the security configs of the broker's listener (security.protocol, ssl.*, sasl.*)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zkafka broker-health: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	id := int32(*brokerID)
	if id < 0 {
		if v := os.Getenv("KAFKA_BROKER_ID"); v != "" {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				fmt.Fprintf(stderr, "zkafka broker-health: KAFKA_BROKER_ID=%q is not an integer\n", v)
				return 2
			}
			id = int32(n)
		}
	}
	var sec wire.Security
	if *commandConfig != "" {
		props, err := brokerconfig.ReadPropertiesFile(*commandConfig)
		if err == nil {
			sec, err = security.ClientSecurity(props)
		}
		if err != nil {
			fmt.Fprintf(stderr, "zkafka broker-health: --command-config: %v\n", err)
			return 2
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	msg, err := brokerHealth(ctx, *bootstrap, id, sec)
	if err != nil {
		fmt.Fprintf(stderr, "zkafka broker-health: %s: %v\n", *bootstrap, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %s\n", *bootstrap, msg)
	return 0
}

// brokerHealth checks one broker, connecting with sec; id < 0 accepts any
// registered broker.
func brokerHealth(ctx context.Context, addr string, id int32, sec wire.Security) (string, error) {
	cl, err := wire.DialSecure(ctx, addr, "zkafka-broker-health", sec)
	if err != nil {
		return "", err
	}
	defer cl.Close()
	resp, err := cl.Request(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		return "", fmt.Errorf("metadata: %w", err)
	}
	md := resp.(*kmsg.MetadataResponse)
	if md.ControllerID < 0 {
		return "", fmt.Errorf("no controller known yet")
	}
	if id < 0 {
		if len(md.Brokers) == 0 {
			return "", fmt.Errorf("no broker registered yet")
		}
		return fmt.Sprintf("ok, %d brokers registered, controller %d", len(md.Brokers), md.ControllerID), nil
	}
	for _, b := range md.Brokers {
		if b.NodeID == id {
			return fmt.Sprintf("ok, broker %d registered, controller %d", id, md.ControllerID), nil
		}
	}
	return "", fmt.Errorf("broker %d is not registered (metadata lists %d brokers)", id, len(md.Brokers))
}
