package server

func (s *Server) inboxRoutes() {}
