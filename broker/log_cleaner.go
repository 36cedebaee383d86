package broker

// The log cleaner's schedule (Kafka's LogCleaner threads, one here): every
// log.cleaner.backoff.ms each local log whose cleanup.policy includes
// "compact" — __consumer_offsets among them — is compacted
// (storage.Log.Clean) with its topic's delete.retention.ms when it is due:
// its dirty ratio reached min.cleanable.dirty.ratio, or its oldest dirty
// record max.compaction.lag.ms (storage.Log.DirtyRatio).

import (
	"errors"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/storage"
	"github.com/zkafka/zkafka/zkpaths"
)

// startLogCleaner starts the cleaner goroutine unless log.cleaner.enable is
// false; it stops with the server.
func (s *Server) startLogCleaner() {
	p := brokerconfig.NewReader(s.cfg.Properties)
	enabled, backoff := p.Bool("log.cleaner.enable"), p.Ms("log.cleaner.backoff.ms")
	if p.Err() != nil || !enabled || backoff <= 0 {
		s.log.Info("Log cleaner disabled", zap.Bool("log.cleaner.enable", enabled), zap.Duration("log.cleaner.backoff.ms", backoff))
		return
	}
	log := s.log.Named("log-cleaner")
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(backoff)
		defer t.Stop()
		for {
			select {
			case <-s.ctx.Done():
				return
			case now := <-t.C:
				s.cleanLogs(now, log)
			}
		}
	}()
}

// cleanLogs runs one cleaning pass over every compacted local log that is due.
func (s *Server) cleanLogs(now time.Time, log *zap.Logger) {
	for tp, l := range s.logs.All() {
		if s.ctx.Err() != nil {
			return
		}
		if !compacted(l.Config().CleanupPolicy) {
			continue
		}
		if _, moving := s.logs.Future(tp.Topic, tp.Partition); moving {
			// Paused while the log is copied to another log dir, as Kafka's
			// abortAndPauseCleaning; the moved log is cleaned afterwards.
			continue
		}
		if _, due := l.DirtyRatio(now); !due {
			continue
		}
		if _, err := l.Clean(s.deleteRetention(tp.Topic), now); err != nil && !errors.Is(err, storage.ErrLogClosed) {
			log.Warn("Cleaning failed", zap.String("topic", tp.Topic), zap.Int32("partition", tp.Partition), zap.Error(err))
		}
	}
}

func compacted(policy string) bool {
	return policy == "compact" || policy == "compact,delete" || policy == "delete,compact"
}

// deleteRetention is a topic's delete.retention.ms: its override, else the
// broker's effective log.cleaner.delete.retention.ms.
func (s *Server) deleteRetention(topic string) time.Duration {
	if data, _, err := s.zk.Get(zkpaths.TopicConfigPath(topic)); err == nil {
		if ec, err := zkpaths.DecodeEntityConfig(data); err == nil {
			if v, err := strconv.ParseInt(ec.Config["delete.retention.ms"], 10, 64); err == nil {
				return time.Duration(v) * time.Millisecond
			}
		}
	}
	ms, _ := strconv.ParseInt(s.configs.topicDefault("delete.retention.ms"), 10, 64)
	return time.Duration(ms) * time.Millisecond
}
