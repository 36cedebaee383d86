package broker

// FetchSessionInfo is what a test sees of a fetch session.
type FetchSessionInfo struct {
	ID         int32
	Follower   bool
	Partitions int
	Epoch      int32
}

// FetchSessions lists s's fetch sessions.
func FetchSessions(s *Server) []FetchSessionInfo {
	var out []FetchSessionInfo
	s.fetchSessions.sessions.Range(func(_, v any) bool {
		fs := v.(*fetchSession)
		fs.mu.Lock()
		out = append(out, FetchSessionInfo{ID: fs.id, Follower: fs.privileged, Partitions: len(fs.parts), Epoch: fs.epoch})
		fs.mu.Unlock()
		return true
	})
	return out
}
