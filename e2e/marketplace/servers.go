package marketplace

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// ServeGit serves the git repository in dir over git's smart HTTP protocol
// on loopback and returns its clone URL (http://127.0.0.1:PORT/<base>.git).
// The server closes when the test ends.
func ServeGit(t testing.TB, dir string) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("marketplace: no git: %v", err)
	}
	// http-backend finds <root>/<name>.git, <root>/<name>/.git and the like.
	h := &cgi.Handler{
		Path: git,
		Args: []string{"http-backend"},
		Env: []string{
			"GIT_PROJECT_ROOT=" + filepath.Dir(dir),
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"HOME=" + t.TempDir(),
		},
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/" + filepath.Base(dir) + "/.git"
}

// Fault is how the release server misbehaves.
type Fault string

// The release server's fault modes.
const (
	// NoFault serves the archive whole, with Range support.
	NoFault Fault = ""
	// Hang accepts the connection, reads the request and never answers.
	Hang Fault = "hang"
	// Truncate answers 200 with only the first half of the archive (a
	// complete response: Content-Length is the half's).
	Truncate Fault = "truncate"
	// WrongChecksum serves a different, valid archive (the same one with
	// another time in its gzip header), so its SHA-256 does not match.
	WrongChecksum Fault = "wrong-checksum"
	// NotFound answers 404.
	NotFound Fault = "404"
	// KillHalfway announces the whole length, sends half and closes the
	// connection.
	KillHalfway Fault = "kill-halfway"
)

// Request is one request the release server saw.
type Request struct {
	Path   string
	Range  string // the Range header, "" when the whole file was asked for
	Fault  Fault
	Status int
	Sent   int64 // body bytes written
	Start  time.Time
	End    time.Time // zero while the request is still being answered
}

// ReleaseServer serves release archives on loopback under /releases/.
type ReleaseServer struct {
	t    testing.TB
	srv  *httptest.Server
	quit chan struct{}

	mu       sync.Mutex
	files    map[string]Archive
	fault    Fault
	rate     int // bytes a second; 0 is unlimited
	requests []*Request
	wrong    map[string][]byte
}

// ServeRelease starts a release server for the given releases' archives.
func ServeRelease(t testing.TB, rels ...*Release) *ReleaseServer {
	t.Helper()
	s := &ReleaseServer{t: t, quit: make(chan struct{}), files: map[string]Archive{}, wrong: map[string][]byte{}}
	for _, r := range rels {
		for _, a := range r.Archives {
			s.files[a.Name] = a
		}
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		close(s.quit)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
	return s
}

// Base returns the SYNAXI_RELEASE_BASE value: the URL the launcher appends
// an archive's name to. Every archive of every release given to
// ServeRelease is served under it.
func (s *ReleaseServer) Base() string { return s.srv.URL + "/releases" }

// SetFault changes how the server answers from the next request on.
func (s *ReleaseServer) SetFault(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = f
}

// SetRate throttles every answer to bytesPerSecond (0: unlimited).
func (s *ReleaseServer) SetRate(bytesPerSecond int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rate = bytesPerSecond
}

// Requests returns a copy of every request seen so far, in arrival order.
func (s *ReleaseServer) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = *r
	}
	return out
}

func (s *ReleaseServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	rec := &Request{Path: r.URL.Path, Range: r.Header.Get("Range"), Fault: s.fault, Start: time.Now()}
	s.requests = append(s.requests, rec)
	dir, name := path.Split(r.URL.Path)
	a, ok := s.files[name]
	ok = ok && dir == "/releases/"
	fault, rate := s.fault, s.rate
	s.mu.Unlock()
	cw := &countingWriter{w: w, rate: rate, quit: s.quit}
	defer func() {
		s.mu.Lock()
		rec.Status, rec.Sent, rec.End = cw.status, cw.n, time.Now()
		s.mu.Unlock()
	}()

	if !ok {
		cw.status = http.StatusNotFound
		http.NotFound(cw, r)
		return
	}
	switch fault {
	case Hang:
		select {
		case <-r.Context().Done():
		case <-s.quit:
		}
		return
	case NotFound:
		cw.status = http.StatusNotFound
		http.NotFound(cw, r)
		return
	}
	data, err := os.ReadFile(a.Path)
	if err != nil {
		cw.status = http.StatusInternalServerError
		http.Error(cw, err.Error(), http.StatusInternalServerError)
		return
	}
	switch fault {
	case Truncate:
		data = data[:len(data)/2]
	case WrongChecksum:
		data = s.wrongArchive(a, data)
	case KillHalfway:
		cw.status = http.StatusOK
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Header().Set("Content-Type", "application/gzip")
		w.WriteHeader(http.StatusOK)
		cw.copyN(data[:len(data)/2])
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					_ = tc.SetLinger(0) // a reset, as a dropped link gives
				}
				_ = conn.Close()
			}
		}
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	// ServeContent answers Range requests (resumed downloads) with 206.
	http.ServeContent(cw, r, a.Name, time.Unix(0, 0), bytes.NewReader(data))
}

// wrongArchive returns the archive with another modification time in its
// gzip header: the same files, a whole, valid archive with another
// checksum. (Compressing the files again took over 30 s for a 35 MB release
// on a loaded machine under -race, which a client sees as a hung server.)
func (s *ReleaseServer) wrongArchive(a Archive, data []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.wrong[a.Name]; ok {
		return w
	}
	// RFC 1952: ID1 ID2 CM FLG MTIME(4, little-endian) …; FHCRC (FLG bit 1)
	// would cover the header, and no archive here sets it.
	if len(data) < 10 || data[0] != 0x1f || data[1] != 0x8b || data[3]&0x02 != 0 {
		s.t.Errorf("marketplace: %s: not a gzip stream without a header CRC", a.Name)
		return nil
	}
	w := bytes.Clone(data)
	binary.LittleEndian.PutUint32(w[4:8], binary.LittleEndian.Uint32(w[4:8])+1)
	s.wrong[a.Name] = w
	return w
}

// countingWriter counts the body bytes written, remembers the status and
// paces writes to rate bytes a second.
type countingWriter struct {
	w      http.ResponseWriter
	rate   int
	quit   chan struct{}
	status int
	n      int64
}

func (c *countingWriter) Header() http.Header { return c.w.Header() }

func (c *countingWriter) WriteHeader(code int) {
	c.status = code
	c.w.WriteHeader(code)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if c.rate <= 0 {
		n, err := c.w.Write(p)
		c.n += int64(n)
		return n, err
	}
	// Chunks of a tenth of a second's worth.
	chunk := max(c.rate/10, 1)
	written := 0
	for len(p) > 0 {
		k := min(chunk, len(p))
		n, err := c.w.Write(p[:k])
		c.n += int64(n)
		written += n
		if err != nil {
			return written, err
		}
		if f, ok := c.w.(http.Flusher); ok {
			f.Flush()
		}
		p = p[k:]
		select {
		case <-time.After(time.Second * time.Duration(k) / time.Duration(c.rate)):
		case <-c.quit:
			return written, io.ErrClosedPipe
		}
	}
	return written, nil
}

func (c *countingWriter) copyN(p []byte) {
	_, _ = c.Write(p)
	if f, ok := c.w.(http.Flusher); ok {
		f.Flush()
	}
}
