// Package fault tells apart the two kinds of operating-system error a task
// meets: the network or a service being away (an outage: wait and run
// again) and a local resource that refuses (a read-only or full file
// system, a permission, a missing path, no file descriptors left), which
// waiting does not fix and which must end the item instead of looping.
//
// The distinction cannot rest on net.Error: syscall.Errno implements
// Timeout and Temporary, so every OS error, EROFS included, satisfies it.
package fault

import (
	"errors"
	"net"
	"syscall"
)

// resourceErrnos are the errors of the local machine's resources, with the
// words a report uses for them.
var resourceErrnos = []struct {
	errno syscall.Errno
	what  string
}{
	{syscall.EROFS, "read-only file system"},
	{syscall.ENOSPC, "no space left on device"},
	{syscall.EDQUOT, "disk quota exceeded"},
	{syscall.EACCES, "permission denied"},
	{syscall.EPERM, "operation not permitted"},
	{syscall.ENOENT, "missing path"},
	{syscall.ENOTDIR, "not a directory"},
	{syscall.EMFILE, "too many open files"},
	{syscall.ENFILE, "too many open files in the system"},
	{syscall.EIO, "input/output error"},
}

// networkErrnos are the errors of a peer or the network between: an outage.
var networkErrnos = []syscall.Errno{
	syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
	syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN,
	syscall.EHOSTDOWN, syscall.EADDRNOTAVAIL,
}

// Resource reports whether err is a local resource's refusal, and names
// it. An error of a network operation counts only when it is about this
// machine's file descriptors: a Unix socket's missing path or a refused
// permission on a dial is the service being away.
func Resource(err error) (string, bool) {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return "", false
	}
	var op *net.OpError
	onNetwork := errors.As(err, &op)
	for _, r := range resourceErrnos {
		if errno != r.errno {
			continue
		}
		if onNetwork && errno != syscall.EMFILE && errno != syscall.ENFILE {
			return "", false
		}
		return r.what, true
	}
	return "", false
}

// Unwritable reports whether err says a directory cannot be written to
// (read-only, not permitted), as against full (Full).
func Unwritable(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}

// Full reports whether err says a file system has no room left.
func Full(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// Network reports whether err is the network or a peer failing: a refused
// or reset connection, an unreachable host, a failed name lookup, or a
// timeout of a network operation. A bare OS error is not, whatever its
// Timeout method says, unless its errno is a network one.
func Network(err error) bool {
	for _, n := range networkErrnos {
		if errors.Is(err, n) {
			return true
		}
	}
	if errors.Is(err, net.ErrClosed) {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		_, local := Resource(err)
		return !local
	}
	var ne net.Error
	if errors.As(err, &ne) {
		if _, bare := ne.(syscall.Errno); bare {
			return false
		}
		return true // a client's timeout (http, a deadline on a connection)
	}
	return false
}
