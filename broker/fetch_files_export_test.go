package broker

import (
	"context"
	"io"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/wire"
)

// FetchBothWays answers req twice on s: with the records read into memory (the copying path, as over
// TLS) and with them left in their files and sent by sendfile through a loopback TCP connection (the
// zero-copy path). It returns both frames as a client receives them and how many partitions' records
// the second left in files.
func FetchBothWays(s *Server, req *kmsg.FetchRequest) (copying, zeroCopy []byte, inFiles int, err error) {
	h := wire.RequestHeader{APIKey: 1, APIVersion: req.Version, CorrelationID: 7}
	copying = wire.AppendResponse(nil, h, s.handleFetch(context.Background(), req, false).response())

	res := s.handleFetch(context.Background(), req, true)
	defer res.close()
	inFiles = len(res.files)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, 0, err
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil, nil, 0, err
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		return nil, nil, 0, err
	}
	sent := make(chan error, 1)
	go func() {
		defer server.Close()
		if files, ok := res.response().(*fileFetchResponse); ok {
			frame, gaps := files.appendFrame(nil, h)
			sent <- files.writeFrame(server, frame, gaps)
			return
		}
		_, err := server.Write(wire.AppendResponse(nil, h, res.resp))
		sent <- err
	}()
	zeroCopy, err = io.ReadAll(client)
	if sendErr := <-sent; err == nil {
		err = sendErr
	}
	return copying, zeroCopy, inFiles, err
}

// Waiters counts the requests registered to be woken by topic-partition's changes.
func Waiters(s *Server, topic string, partition int32) int {
	p, _, err := s.replicas.leaderPartition(topic, partition, -1)
	if err != nil {
		return -1
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.hwWaiters) + len(p.dataWaiters)
}
