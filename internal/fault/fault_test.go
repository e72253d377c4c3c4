package fault

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
)

// The errors below are built as the standard library hands them over: an
// errno inside os.PathError, os.LinkError, os.SyscallError or net.OpError,
// wrapped again by the code that met them.
func TestResourceAndNetworkByCause(t *testing.T) {
	t.Parallel()
	path := func(op string, e syscall.Errno) error {
		return fmt.Errorf("write snapshot: %w", &os.PathError{Op: op, Path: "/cache/x", Err: e})
	}
	dial := func(e syscall.Errno) error {
		return fmt.Errorf("enqueue: %w", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", e)})
	}
	for _, tc := range []struct {
		name     string
		err      error
		resource string // "" when not a local resource
		network  bool
	}{
		{"read-only file system", path("mkdir", syscall.EROFS), "read-only file system", false},
		{"disk full", path("write", syscall.ENOSPC), "no space left on device", false},
		{"quota", path("write", syscall.EDQUOT), "disk quota exceeded", false},
		{"permission", path("open", syscall.EACCES), "permission denied", false},
		{"not permitted", path("chmod", syscall.EPERM), "operation not permitted", false},
		{"missing path", path("open", syscall.ENOENT), "missing path", false},
		{"rename across a read-only mount", &os.LinkError{Op: "rename", Old: "/a", New: "/b", Err: syscall.EROFS}, "read-only file system", false},
		{"too many open files", os.NewSyscallError("pipe2", syscall.EMFILE), "too many open files", false},
		{"file table full", path("open", syscall.ENFILE), "too many open files in the system", false},
		{"accept out of descriptors", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", syscall.EMFILE)}, "too many open files", false},
		{"bare errno", syscall.ENOSPC, "no space left on device", false},
		{"connection refused", dial(syscall.ECONNREFUSED), "", true},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, "", true},
		{"broken pipe", &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}, "", true},
		{"host unreachable", dial(syscall.EHOSTUNREACH), "", true},
		{"unix socket gone", &net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", syscall.ENOENT)}, "", true},
		{"unix socket not permitted", &net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", syscall.EACCES)}, "", true},
		{"dns", &net.DNSError{Err: "no such host", Name: "redis", IsNotFound: true}, "", true},
		{"read timeout", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, "", true},
		{"http timeout", &url.Error{Op: "Get", URL: "http://x", Err: os.ErrDeadlineExceeded}, "", true},
		{"closed connection", fmt.Errorf("read: %w", net.ErrClosed), "", true},
		{"plain error", errors.New("something odd"), "", false},
		{"cancelled", context.Canceled, "", false},
	} {
		what, ok := Resource(tc.err)
		if what != tc.resource || ok != (tc.resource != "") {
			t.Errorf("%s: Resource(%v) = %q, %v; want %q", tc.name, tc.err, what, ok, tc.resource)
		}
		if got := Network(tc.err); got != tc.network {
			t.Errorf("%s: Network(%v) = %v, want %v", tc.name, tc.err, got, tc.network)
		}
	}
}

func TestUnwritableAndFull(t *testing.T) {
	t.Parallel()
	ro := &os.PathError{Op: "mkdir", Path: "/c", Err: syscall.EROFS}
	full := &os.PathError{Op: "write", Path: "/c/f", Err: syscall.ENOSPC}
	if !Unwritable(ro) || Unwritable(full) {
		t.Error("a read-only file system is unwritable, a full one is not")
	}
	if !Full(full) || Full(ro) {
		t.Error("a full file system is full, a read-only one is not")
	}
}
