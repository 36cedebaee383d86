package main

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zkafka/zkafka/internal/bench"
)

// TestKfakeReference runs a small load against the reference cluster and
// checks that every record went there and came back, and that the cluster and
// its clients are gone when Run returns.
func TestKfakeReference(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := kfakeReference.Run(ctx, bench.Options{Records: 2000, Partitions: 3}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Target != "kfake" || res.Records != 2000 || res.Bytes != 2000*bench.DefaultRecordSize {
		t.Errorf("result %+v, want 2000 records of %d bytes against kfake", res, bench.DefaultRecordSize)
	}
}
