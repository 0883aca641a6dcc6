package server

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"time"

	"github.com/synaxi/synaxi/internal/recall"
	"github.com/synaxi/synaxi/internal/visibility"
)

// VisibilityPath is where the proxy answers a context's visibility export
// (GET, ?session=…&agent=…; agent empty or absent for the main
// conversation), for a no-reread hook on another machine than the proxy. It
// needs the team token like every other request.
const VisibilityPath = "/synaxi/v1/visibility"

// VisibilityStore holds visibility exports where every replica reads them
// (proxyd/internal/visstore: Redis).
type VisibilityStore interface {
	Write(ctx context.Context, e *visibility.Export) error
	Read(ctx context.Context, session, agent string) (*visibility.Export, error)
}

// storeTimeout bounds one call to the shared store.
const storeTimeout = 2 * time.Second

// storeVisibility writes an export to the state dir and, when one is
// configured, to the shared store.
func (s *Server) storeVisibility(v *visibility.Export) error {
	err := visibility.Write(s.o.Dirs, v)
	if s.o.SharedVisibility != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		err = errors.Join(err, s.o.SharedVisibility.Write(ctx, v))
	}
	return err
}

// readVisibility reads a context's export from the shared store when one is
// configured (any replica may have written it), else from the state dir.
func (s *Server) readVisibility(ctx context.Context, session, agent string) (*visibility.Export, error) {
	if s.o.SharedVisibility != nil {
		ctx, cancel := context.WithTimeout(ctx, storeTimeout)
		defer cancel()
		return s.o.SharedVisibility.Read(ctx, session, agent)
	}
	return visibility.Read(s.o.Dirs, session, agent)
}

// serveVisibility answers the export of one conversation context: 200 with
// the export's JSON, 404 when there is none for it (the context was never
// projected here, or by any replica with a shared store), 400 without a
// session. The hook allows the read
// on anything but a 200 it can decode.
func (s *Server) serveVisibility(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	session := q.Get("session")
	if session == "" {
		http.Error(w, "synaxi-proxyd: "+VisibilityPath+" needs ?session=<the client's session id>[&agent=<agent id>]", http.StatusBadRequest)
		return
	}
	e, err := s.readVisibility(r.Context(), session, q.Get("agent"))
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

// keepRecall stores the outputs a projection folded out, for the recall
// tool (internal/recall), beside the serve; Wait covers it.
func (s *Server) keepRecall(req *request, texts []string) {
	if len(texts) == 0 {
		return
	}
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		for _, t := range texts {
			if err := recall.Put(s.o.Dirs, []byte(t), time.Now()); err != nil {
				s.log.Warn("keep folded output for recall", "id", req.id, "err", err)
				return
			}
		}
	}()
}
