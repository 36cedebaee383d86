package broker

// ConnectionCount is the number of connections the broker counts against
// max.connections, over all listeners.
func ConnectionCount(s *Server) int32 {
	s.quotas.mu.Lock()
	defer s.quotas.mu.Unlock()
	return s.quotas.total
}
