package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/synaxi/synaxi/internal/proxyinfo"
	"github.com/synaxi/synaxi/internal/xdg"
	"github.com/synaxi/synaxi/proxyd/internal/daemon"
)

// takeoverWait bounds how long a replacement waits for the instance it
// signalled to close its listener (it does so at once on SIGTERM, before
// draining).
const takeoverWait = 30 * time.Second

// lockPoll is how often a replacement tries for the instance lock while
// the instance it replaced lets go of it.
const lockPoll = 5 * time.Millisecond

// claim is this process's hold on the proxy's place: the one-instance
// lock, taken at once or, after a takeover, once the replaced instance
// lets go of it.
type claim struct {
	mu       sync.Mutex
	lock     *daemon.Lock
	released bool
}

// release drops the lock (at drain, so a replacement can take it) and
// keeps a lock still being waited for from being held.
func (c *claim) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.released = true
	if c.lock != nil {
		_ = c.lock.Release()
		c.lock = nil
	}
}

// take claims the lock and the listener serve runs on. With --takeover
// and an instance already running, it replaces that instance without
// dropping a request: it signals it (SIGTERM: the instance closes its
// listener, then drains its in-flight streams to their end) and binds the
// same address as soon as it is free, so new connections wait in this
// listener's backlog rather than being refused, except in the moment
// between the old listener's close and the new bind (milliseconds). It
// reports tookOver; holdLock then takes the lock, which an instance of
// this version gives up when its listener closes and an older one when it
// exits.
func (c *claim) take(dirs xdg.Dirs, o *options, port int, log *slog.Logger) (ln net.Listener, tookOver bool, err error) {
	lock, err := daemon.Acquire(dirs)
	if err == nil {
		ln, err := daemon.Listen(dirs, o.listen, port)
		if err != nil {
			_ = lock.Release()
			return nil, false, err
		}
		c.lock = lock
		return ln, false, nil
	}
	if !o.takeover || !errors.Is(err, daemon.ErrRunning) {
		return nil, false, err
	}
	old, err := daemon.Running(dirs)
	if err != nil {
		return nil, false, fmt.Errorf("take over: %w", err)
	}
	log.Info("taking over", "pid", old.PID, "addr", old.Addr, "version", old.Version)
	if err := syscall.Kill(old.PID, syscall.SIGTERM); err != nil {
		return nil, false, fmt.Errorf("take over: signal pid %d: %w", old.PID, err)
	}
	deadline := time.Now().Add(takeoverWait)
	for {
		ln, err = net.Listen("tcp", old.Addr)
		if err == nil {
			return ln, true, nil
		}
		if time.Now().After(deadline) {
			return nil, false, fmt.Errorf("take over: pid %d did not close %s within %s of SIGTERM: %w", old.PID, old.Addr, takeoverWait, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// holdLock waits until the replaced instance lets go of the lock, takes
// it, and publishes info again if that instance removed the record on its
// way out.
func (c *claim) holdLock(ctx context.Context, dirs xdg.Dirs, info *proxyinfo.Info, log *slog.Logger) {
	for {
		lock, err := daemon.Acquire(dirs)
		if err == nil {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.released {
				_ = lock.Release()
				return
			}
			c.lock = lock
			if cur, err := proxyinfo.Read(dirs); err != nil || cur.PID != info.PID {
				if err := daemon.Publish(dirs, info); err != nil {
					log.Error("publish after takeover", "err", err)
				}
			}
			log.Info("took over the instance lock")
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(lockPoll):
		}
	}
}
