package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/proxyd/internal/daemon"
)

// TestTakeoverKeepsTheStreamInFlight: `start --takeover` replaces a
// running instance while one of its streams is in flight. The stream
// completes byte for byte, the replacement answers on the same address
// before the old instance has finished draining, requests sent all through
// the swap are answered (a few sent again after a connection error, as the
// client does), and in the end the replacement holds the lock and
// the record.
func TestTakeoverKeepsTheStreamInFlight(t *testing.T) {
	d := isolate(t)
	rig := newDrainRig(t, d)
	up, old, oldLog, exited, info, resp := rig.up, rig.old, rig.log, rig.exited, rig.info, rig.stream

	// Requests all through the swap, each on a new connection. A
	// connection opened in the moment between the old listener's close and
	// the new bind is refused, or reset if it was still in the old
	// listener's backlog: the request never reached a proxy, and the client
	// sends it again, as Claude Code's API client does with connection
	// errors. No request may be lost.
	stop := make(chan struct{})
	var sent, retried, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		post := func() error {
			r, err := client.Post("http://"+info.Addr+"/v1/messages", "application/json", strings.NewReader(`{}`))
			if err != nil {
				return err
			}
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if string(b) != tail {
				return fmt.Errorf("status %d: %q", r.StatusCode, b)
			}
			return nil
		}
		for {
			select {
			case <-stop:
				return
			default:
			}
			sent.Add(1)
			err := post()
			// Claude Code's client backs off half a second and more; a
			// loaded machine may take longer than a few milliseconds to
			// bind, so keep trying for up to 5 s.
			for give := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(give) && !strings.Contains(err.Error(), "status "); {
				retried.Add(1)
				time.Sleep(25 * time.Millisecond)
				err = post()
			}
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()

	code, out, errOut := runCmd(t, "start", "--takeover", "--upstream", up.URL)
	require.Equal(t, 0, code, errOut)
	t.Cleanup(func() { runCmd(t, "stop") })
	assert.Equal(t, info.Addr, strings.TrimSpace(out), "the replacement listens where the old one did")
	next, err := proxyinfo.Read(d)
	require.NoError(t, err)
	assert.NotEqual(t, old.Process.Pid, next.PID)
	select {
	case err := <-exited:
		t.Fatalf("the old instance exited with a stream in flight: %v\n%s", err, oldLog.String())
	default:
	}
	time.Sleep(200 * time.Millisecond) // requests to the replacement alone
	close(stop)
	wg.Wait()
	t.Logf("requests during the swap: %d sent, %d sent again after a connection error, %d lost (first: %v)", sent.Load(), retried.Load(), failed.Load(), firstErr.Load())
	assert.Zero(t, failed.Load(), "a request sent during the swap was lost: %v", firstErr.Load())

	rig.finish()
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, tail, string(rest), "the stream in flight completes")
	select {
	case err := <-exited:
		assert.NoError(t, err, "exit 0 after the drain\n%s", oldLog.String())
	case <-time.After(30 * time.Second):
		t.Fatal("the old instance did not exit after its stream ended")
	}
	require.Eventually(t, func() bool {
		i, err := daemon.Running(d)
		return err == nil && i.PID == next.PID
	}, 10*time.Second, 20*time.Millisecond, "the replacement holds the lock and the record")
}

// TestTakeoverOfAnInstanceThatKeepsItsLock: an older instance gives up
// its lock only when it exits, and removes the record on the way out. The
// replacement serves from the moment the port is free, takes the lock
// when it is released, and publishes its record again.
func TestTakeoverOfAnInstanceThatKeepsItsLock(t *testing.T) {
	d := isolate(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	defer up.Close()

	// The "older instance": this test holds its lock and listener; its
	// record names a process that SIGTERM ends.
	lock, err := daemon.Acquire(d)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	sleeper := exec.Command("sleep", "120")
	require.NoError(t, sleeper.Start())
	require.NoError(t, daemon.Publish(d, &proxyinfo.Info{PID: sleeper.Process.Pid, Addr: ln.Addr().String(), Version: "v0.1.0"}))
	gone := make(chan struct{})
	go func() {
		_ = sleeper.Wait()
		ln.Close() // it stops accepting on SIGTERM ...
		close(gone)
	}()

	done := make(chan struct{})
	var code int
	var out, errOut string
	go func() {
		defer close(done)
		code, out, errOut = runCmd(t, "start", "--takeover", "--upstream", up.URL)
	}()
	<-gone
	<-done
	require.Equal(t, 0, code, errOut)
	t.Cleanup(func() { runCmd(t, "stop") })
	assert.Equal(t, ln.Addr().String(), strings.TrimSpace(out))
	r, err := http.Get("http://" + ln.Addr().String() + "/health")
	require.NoError(t, err)
	r.Body.Close()
	assert.Equal(t, http.StatusOK, r.StatusCode, "the replacement serves while the old one still holds the lock")

	// ... and lets go of the lock and the record only when it exits.
	require.NoError(t, os.Remove(proxyinfo.Path(d)))
	require.NoError(t, lock.Release())
	require.Eventually(t, func() bool {
		i, err := daemon.Running(d)
		return err == nil && i.PID != sleeper.Process.Pid && i.Addr == ln.Addr().String()
	}, 10*time.Second, 20*time.Millisecond, "the replacement took the lock and published its record again")
}

// The slow stream's first and last event.
const head, tail = "event: message_start\ndata: {}\n\n", "event: message_stop\ndata: {}\n\n"

// drainRig is a proxy instance (`serve`, a child process) with a stream in
// flight: the upstream sends head at once and tail only after finish; any
// other request gets tail at once.
type drainRig struct {
	up     *httptest.Server
	old    *exec.Cmd
	log    *bytes.Buffer
	exited chan error
	info   *proxyinfo.Info
	stream *http.Response // head already read
	finish func()         // lets the upstream end the stream
}

func newDrainRig(t *testing.T, d xdg.Dirs) *drainRig {
	t.Helper()
	release := make(chan struct{})
	var once sync.Once
	r := &drainRig{finish: func() { once.Do(func() { close(release) }) }, log: &bytes.Buffer{}, exited: make(chan error, 1)}
	t.Cleanup(r.finish)
	r.up = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if req.URL.Path == "/v1/messages" && req.URL.RawQuery == "slow" {
			_, _ = io.WriteString(w, head)
			w.(http.Flusher).Flush()
			<-release
		}
		_, _ = io.WriteString(w, tail)
	}))
	t.Cleanup(r.up.Close)

	r.old = exec.Command(os.Args[0], "serve", "--upstream", r.up.URL, "--drain", "1m")
	r.old.Stdout, r.old.Stderr = r.log, r.log
	require.NoError(t, r.old.Start())
	go func() { r.exited <- r.old.Wait() }()
	require.Eventually(t, func() bool {
		i, err := proxyinfo.Read(d)
		r.info = i
		return err == nil && i.PID == r.old.Process.Pid
	}, 10*time.Second, 20*time.Millisecond)

	resp, err := http.Post("http://"+r.info.Addr+"/v1/messages?slow", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	buf := make([]byte, len(head))
	_, err = io.ReadFull(resp.Body, buf)
	require.NoError(t, err, "the stream has begun")
	r.stream = resp
	return r
}
