package gitsrc

import (
	"errors"
	"regexp"
	"strings"
)

// UnreachableError is a remote git could not talk to: the host does not
// resolve, refuses the connection, times out, or refuses the credentials or
// the repository. Its message is one sentence for the person who typed the
// URL, not the stack of commands that led to it.
type UnreachableError struct {
	URL    string // the remote, without credentials
	Reason string // what git said, e.g. "Could not resolve host: example.invalid"
	Err    error  // the git command's error
}

func (e *UnreachableError) Error() string {
	return "cannot reach " + e.URL + ": " + e.Reason
}

func (e *UnreachableError) Unwrap() error { return e.Err }

var reUnableToAccess = regexp.MustCompile(`unable to access '[^']*': (.+)`)

// unreachable recognises, in a failed remote command's error, that the
// remote could not be reached, and returns it as an UnreachableError.
func unreachable(url string, err error) error {
	var ge *Error
	if !errors.As(err, &ge) {
		return err
	}
	msg := ge.Stderr
	reason := ""
	if m := reUnableToAccess.FindStringSubmatch(msg); m != nil {
		reason = m[1]
	} else {
		for _, s := range []string{"Could not resolve hostname", "Connection refused", "Connection timed out",
			"Repository not found", "Authentication failed", "Permission denied", "Could not read from remote repository"} {
			if strings.Contains(msg, s) {
				reason = s
				break
			}
		}
	}
	if reason == "" {
		return err
	}
	reason, _, _ = strings.Cut(strings.TrimSpace(reason), "\n")
	// curl's "Failed to connect to h port 1 after 0 ms: Couldn't connect
	// to server" says the same thing twice.
	if i := strings.Index(reason, " after "); i > 0 && strings.Contains(reason, "Failed to connect") {
		reason = reason[:i]
	}
	return &UnreachableError{URL: url, Reason: reason, Err: err}
}
