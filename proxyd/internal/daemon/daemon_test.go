package daemon

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"
)

func TestSingleInstanceLock(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	assert.False(t, Held(d))
	l, err := Acquire(d)
	require.NoError(t, err)
	assert.True(t, Held(d))
	require.NoError(t, Publish(d, &proxyinfo.Info{PID: 42, Addr: "127.0.0.1:1"}))
	_, err = Acquire(d)
	require.ErrorIs(t, err, ErrRunning)
	assert.Contains(t, err.Error(), "pid 42 on 127.0.0.1:1")
	info, err := Running(d)
	require.NoError(t, err)
	assert.Equal(t, 42, info.PID)
	require.NoError(t, l.Release())
	assert.False(t, Held(d))
	_, err = Running(d)
	require.ErrorIs(t, err, ErrNotRunning)
	Unpublish(d, 41)
	_, err = proxyinfo.Read(d)
	require.NoError(t, err, "another pid's record stays")
	Unpublish(d, 42)
	_, err = proxyinfo.Read(d)
	require.Error(t, err)
}

func TestListenPortChosenOnce(t *testing.T) {
	d := xdg.Dirs{State: t.TempDir()}
	ln, err := Listen(d, "", 0)
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	assert.True(t, strings.HasPrefix(ln.Addr().String(), "127.0.0.1:"))
	b, err := os.ReadFile(proxyinfo.PortPath(d))
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(port)+"\n", string(b))
	fi, err := os.Stat(proxyinfo.PortPath(d))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// While the port is taken another is chosen and recorded…
	other, err := Listen(d, "", 0)
	require.NoError(t, err)
	assert.NotEqual(t, port, other.Addr().(*net.TCPAddr).Port)
	other.Close()
	ln.Close()
	// …and the recorded one is reused afterwards.
	again, err := Listen(d, "", 0)
	require.NoError(t, err)
	defer again.Close()
	assert.Equal(t, other.Addr().(*net.TCPAddr).Port, again.Addr().(*net.TCPAddr).Port)

	explicit, err := Listen(d, "127.0.0.1:0", 0)
	require.NoError(t, err)
	explicit.Close()
}
