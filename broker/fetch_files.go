package broker

import (
	"fmt"
	"io"
	"net"
	"os"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/storage"
	"github.com/zkafka/zkafka/wire"
)

// fetchResult is a Fetch response whose records may still lie in segment files: on a plain TCP
// connection the handler leaves them there (storage.FileRecords) and the listener sends them from the
// file to the socket (zero-copy, issue 17), as Kafka's FetchResponse carries FileRecords to the
// network layer. Whoever drops a fetchResult closes its files.
type fetchResult struct {
	resp  *kmsg.FetchResponse
	files recordFiles
}

// recordFiles are the records left in files, by topic and partition index in a response's Topics.
type recordFiles map[[2]int]*storage.FileRecords

// add records partition pi of topic ti's records in file.
func (fs *recordFiles) add(ti, pi int, file *storage.FileRecords) {
	if *fs == nil {
		*fs = recordFiles{}
	}
	(*fs)[[2]int{ti, pi}] = file
}

// len is the size of partition pi of topic ti's records in a file, or -1 when they are not in one
// (wire.AppendFetchResponseFrame's external).
func (fs recordFiles) len(ti, pi int) int {
	if fr, ok := fs[[2]int{ti, pi}]; ok {
		return fr.Len()
	}
	return -1
}

// close releases the files.
func (fs recordFiles) close() {
	for _, fr := range fs {
		fr.Close()
	}
}

// recordsLen is the size of partition pi of topic ti's records, in memory or in a file.
func (f *fetchResult) recordsLen(ti, pi int) int {
	if n := f.files.len(ti, pi); n >= 0 {
		return n
	}
	return len(f.resp.Topics[ti].Partitions[pi].RecordBatches)
}

// bytes is the record bytes of the response.
func (f *fetchResult) bytes() int {
	n := 0
	for ti, t := range f.resp.Topics {
		for pi := range t.Partitions {
			n += f.recordsLen(ti, pi)
		}
	}
	return n
}

// throttledBytes is the record bytes of the partitions that q throttles
// (Kafka's sizeOfThrottledPartitions).
func (f *fetchResult) throttledBytes(q *quota.Replication) int {
	n := 0
	for ti, t := range f.resp.Topics {
		for pi, p := range t.Partitions {
			if q.IsThrottled(t.Topic, p.Partition) {
				n += f.recordsLen(ti, pi)
			}
		}
	}
	return n
}

// keep leaves in the response only the partitions for which want(ti, pi) is true, merging a topic
// with the one before it when they meet (as Kafka groups a response's partitions by topic in
// order); the files follow their partitions, and those of partitions left out are closed.
func (f *fetchResult) keep(want func(ti, pi int) bool) {
	var topics []kmsg.FetchResponseTopic
	var files recordFiles
	for ti, t := range f.resp.Topics {
		for pi, p := range t.Partitions {
			file, inFile := f.files[[2]int{ti, pi}]
			if !want(ti, pi) {
				if inFile {
					file.Close()
				}
				continue
			}
			if n := len(topics); n == 0 || topics[n-1].Topic != t.Topic {
				topics = append(topics, kmsg.FetchResponseTopic{Topic: t.Topic, TopicID: t.TopicID, UnknownTags: t.UnknownTags})
			}
			last := &topics[len(topics)-1]
			if inFile {
				files.add(len(topics)-1, len(last.Partitions), file)
			}
			last.Partitions = append(last.Partitions, p)
		}
	}
	f.resp.Topics, f.files = topics, files
}

// close releases the files.
func (f *fetchResult) close() {
	f.files.close()
	f.files = nil
}

// response is what the handler answers: the plain response when every record is in memory.
func (f *fetchResult) response() kmsg.Response {
	if len(f.files) == 0 {
		return f.resp
	}
	return &fileFetchResponse{FetchResponse: f.resp, files: f.files}
}

// fileFetchResponse is a Fetch response with records in files, for the listener to write with
// writeFrame; it is a kmsg.Response so the request path (throttles, request quotas) treats it as any
// Fetch response.
type fileFetchResponse struct {
	*kmsg.FetchResponse
	files recordFiles
}

// appendFrame appends the response's frame with gaps where the files' records go.
func (f *fileFetchResponse) appendFrame(dst []byte, h wire.RequestHeader) ([]byte, []wire.Gap) {
	return wire.AppendFetchResponseFrame(dst, h, f.FetchResponse, f.files.len)
}

// writeFrame writes the frame to c, each gap filled from its file, and releases the files.
func (f *fileFetchResponse) writeFrame(c net.Conn, frame []byte, gaps []wire.Gap) error {
	defer f.close()
	at := 0
	for _, g := range gaps {
		if _, err := c.Write(frame[at:g.At]); err != nil {
			return err
		}
		file, pos := f.files[[2]int{g.Topic, g.Partition}].File()
		if err := sendFile(c, file, pos, g.Len); err != nil {
			return err
		}
		at = g.At
	}
	_, err := c.Write(frame[at:])
	return err
}

// close releases the files; a nil response has none.
func (f *fileFetchResponse) close() {
	if f != nil {
		f.files.close()
	}
}

// copyFile writes n bytes of f from pos to c through a buffer: sendFile's way where sendfile(2) is not.
func copyFile(c net.Conn, f *os.File, pos int64, n int) error {
	m, err := io.Copy(c, io.NewSectionReader(f, pos, int64(n)))
	if err == nil && m < int64(n) {
		err = fmt.Errorf("copy %s: %w", f.Name(), io.ErrUnexpectedEOF)
	}
	return err
}
