package broker

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"go.uber.org/zap"
)

// startPprof serves Go's profiles at zkafka.pprof.listener (issue 17:
// profile before optimising). Its own mux keeps the handlers off
// http.DefaultServeMux; the server stops with the broker's context.
func (s *Server) startPprof() error {
	addr := s.cfg.PprofListener
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("zkafka.pprof.listener %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.pprofAddr = ln.Addr().String()
	s.log.Info("Serving pprof", zap.String("address", s.pprofAddr))
	s.wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Warn("pprof server stopped", zap.Error(err))
		}
	})
	s.wg.Go(func() {
		<-s.ctx.Done()
		srv.Close()
	})
	return nil
}

// PprofAddr is the bound address of zkafka.pprof.listener, or "" when it is off.
func (s *Server) PprofAddr() string { return s.pprofAddr }
