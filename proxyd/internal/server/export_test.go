package server

// SetTestHook makes f run at the start of each stage of every Messages
// request ("gate", "project", "probe", "response", "record"), to fault it,
// and at "outbound" for every request sent upstream. A nil f removes the
// hook.
func SetTestHook(s *Server, f func(stage string)) {
	if f == nil {
		s.testHook.Store(nil)
		return
	}
	s.testHook.Store(&f)
}
