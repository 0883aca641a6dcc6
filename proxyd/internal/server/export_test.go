package server

// SetTestHookGate makes f run inside the gate of every Messages request.
func SetTestHookGate(s *Server, f func()) { s.testHookGate = f }
