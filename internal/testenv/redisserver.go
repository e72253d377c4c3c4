package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisServer is a redis-server process that a test (or a test process)
// started itself, on a free port, without persistence: flushing,
// killing or restarting it touches nobody else's data.
type RedisServer struct {
	Addr string
	bin  string
	dir  string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// RedisServerBinary returns the path of redis-server, or "" when it is not
// installed.
func RedisServerBinary() string {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return ""
	}
	return p
}

// StartRedisServer starts a redis-server of t's own, stopped when t ends.
// The test is skipped, saying why, when redis-server is not installed.
func StartRedisServer(t testing.TB) *RedisServer {
	t.Helper()
	bin := RedisServerBinary()
	if bin == "" {
		t.Skip("redis-server is not installed: this test needs a Redis server of its own to flush, kill and restart (apt-get install redis-server)")
	}
	s, err := startRedisServer(bin)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

func startRedisServer(bin string) (*RedisServer, error) {
	dir, err := os.MkdirTemp("", "reviewfleet-testredis-")
	if err != nil {
		return nil, fmt.Errorf("create directory for a redis-server: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("find a free port for redis-server: %w", err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	s := &RedisServer{Addr: addr, bin: bin, dir: dir}
	if err := s.start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *RedisServer) start() error {
	_, port, _ := net.SplitHostPort(s.Addr)
	cmd := exec.Command(s.bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--logfile", filepath.Join(s.dir, "redis.log"), "--databases", "16")
	// The server dies with the test process even if cleanup never runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			s.Kill()
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			return fmt.Errorf("redis-server on %s did not answer: %w\n%s", s.Addr, err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// URL is the server's redis:// URL for database db.
func (s *RedisServer) URL(db int) string {
	return "redis://" + s.Addr + "/" + strconv.Itoa(db)
}

// Kill stops the server at once (SIGKILL): with no persistence every key
// is lost.
func (s *RedisServer) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

// Restart kills the server and starts an empty one on the same port.
func (s *RedisServer) Restart() error {
	s.Kill()
	var err error
	for range 50 { // the port may linger for a moment
		if err = s.start(); err == nil || !errors.Is(err, syscall.EADDRINUSE) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// Stop kills the server and removes its files.
func (s *RedisServer) Stop() {
	s.Kill()
	_ = os.RemoveAll(s.dir)
}
