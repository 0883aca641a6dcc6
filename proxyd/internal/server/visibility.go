package server

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"

	"github.com/synaxi/synaxi/internal/visibility"
)

// VisibilityPath is where the proxy answers a context's visibility export
// (GET, ?session=…&agent=…; agent empty or absent for the main
// conversation), for a no-reread hook on another machine than the proxy. It
// needs the team token like every other request.
const VisibilityPath = "/synaxi/v1/visibility"

// serveVisibility answers the export of one conversation context: 200 with
// the export's JSON, 404 when this proxy has none for it (the context was
// never projected here), 400 without a session. The hook allows the read
// on anything but a 200 it can decode.
func (s *Server) serveVisibility(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	session := q.Get("session")
	if session == "" {
		http.Error(w, "synaxi-proxyd: "+VisibilityPath+" needs ?session=<the client's session id>[&agent=<agent id>]", http.StatusBadRequest)
		return
	}
	e, err := visibility.Read(s.o.Dirs, session, q.Get("agent"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		http.Error(w, "synaxi-proxyd: no visibility export for this context", http.StatusNotFound)
		return
	case err != nil:
		s.log.Warn("read visibility export", "err", err)
		http.Error(w, "synaxi-proxyd: the visibility export cannot be read", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(e)
}
