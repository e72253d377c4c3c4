// Package gitsrc reads changes and snapshots out of git repositories by
// running the git binary: it resolves revisions, produces the diff between
// two of them, reads single files, exports a whole tree to a directory and
// clones remote repositories. Every call takes a context that bounds the git
// process, and git's own error output ends up in the returned error.
package gitsrc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Errors callers can test for with errors.Is.
var (
	// ErrNotExist is returned, wrapped, when a file is absent at the given
	// revision or in the work tree. It is fs.ErrNotExist, so either can be
	// tested.
	ErrNotExist = fs.ErrNotExist
	// ErrUnknownRevision is returned, wrapped, when a revision does not name
	// a commit in the repository.
	ErrUnknownRevision = errors.New("unknown revision")
	// ErrUnsafePath is returned, wrapped, for a path that is absolute, leaves
	// its root through "..", or could be read as a git option.
	ErrUnsafePath = errors.New("unsafe path")
)

// Error is a failed git command.
type Error struct {
	// Args are git's arguments.
	Args []string
	// Stderr is what git wrote to its standard error, trimmed.
	Stderr string
	// Err is the process error, usually an *exec.ExitError.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	msg := fmt.Sprintf("git %s: %v", strings.Join(e.Args, " "), e.Err)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

// Unwrap returns the process error.
func (e *Error) Unwrap() error { return e.Err }

// maxStderr bounds how much of git's standard error is kept for messages.
const maxStderr = 4 << 10

// waitDelay is how long a killed git may keep its output pipes open.
const waitDelay = 5 * time.Second

// command prepares git with args in dir for a command that reads the
// repository only and talks to no remote: every transport is refused (a
// promisor remote in the repository's configuration is never contacted).
func command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	return gitCommand(ctx, dir, "", args...)
}

// hardening is given to every git the fleet runs. A repository's own
// configuration (.git/config, its includes, .gitattributes, hooks) is
// written by whoever submitted it, so nothing in it may run a program:
// no fsmonitor, no hooks, no pager or editor, no external diff, no
// credential helper or askpass, no signature program, no ssh command of
// its choosing. Filters and textconv drivers apply only to commands the
// fleet does not run (checkout, add, archive, diff without --no-textconv).
var hardening = []string{
	"--no-pager",
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=" + os.DevNull,
	"-c", "core.pager=cat",
	"-c", "core.editor=false",
	"-c", "sequence.editor=false",
	"-c", "core.askPass=",
	"-c", "credential.helper=",
	"-c", "core.sshCommand=ssh",
	"-c", "core.gitProxy=",
	"-c", "core.attributesFile=" + os.DevNull,
	"-c", "core.excludesFile=" + os.DevNull,
	"-c", "diff.external=",
	"-c", "log.showSignature=false",
	"-c", "submodule.recurse=false",
	"-c", "fetch.recurseSubmodules=false",
	"-c", "color.ui=false",
	"-c", "protocol.allow=never",
}

// keptEnv are the GIT_ variables of the fleet's own environment git still
// sees: how to reach remotes (ssh, certificates), where git's programs are,
// and tracing (GIT_TRACE*, which redacts credentials). Every other GIT_
// variable (GIT_DIR, GIT_CONFIG_*, GIT_EXTERNAL_DIFF, GIT_ASKPASS, …) is
// dropped.
var keptEnv = map[string]bool{
	"GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_SSH_VARIANT": true,
	"GIT_SSL_CAINFO": true, "GIT_SSL_CAPATH": true, "GIT_EXEC_PATH": true,
}

func keepGitVar(name string) bool {
	return keptEnv[name] || strings.HasPrefix(name, "GIT_TRACE") && name != "GIT_TRACE_REDACT"
}

// gitCommand is the one constructor of every git process: hardened
// against the configuration of the repository it runs in (see hardening),
// with no system or global configuration, a HOME holding nothing, no
// prompts, messages in English, and protocol the one transport allowed
// ("" for none). dir, when set, is the only directory git trusts as a
// repository owned by someone else (safe.directory).
func gitCommand(ctx context.Context, dir, protocol string, args ...string) *exec.Cmd {
	full := append([]string{}, hardening...)
	if protocol != "" {
		full = append(full, "-c", "protocol."+protocol+".allow=always")
	}
	if dir != "" {
		full = append(full, "-c", "safe.directory="+trustedDir(dir))
	}
	cmd := exec.CommandContext(ctx, "git", append(full, args...)...)
	cmd.Dir = dir
	cmd.Env = gitEnv(os.Environ())
	cmd.WaitDelay = waitDelay
	return cmd
}

// gitEnv is environ without the variables that would let configuration in
// (see keptEnv), plus those that keep every configuration file out.
func gitEnv(environ []string) []string {
	env := make([]string, 0, len(environ)+12)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "HOME" || name == "XDG_CONFIG_HOME" || name == "SSH_ASKPASS" || name == "PAGER" || name == "LC_ALL":
			continue
		case strings.HasPrefix(name, "GIT_") && !keepGitVar(name):
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+os.DevNull, "XDG_CONFIG_HOME="+os.DevNull,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_SYSTEM="+os.DevNull, "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_ATTR_NOSYSTEM=1", "GIT_NO_REPLACE_OBJECTS=1",
		"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat", "GIT_EDITOR=false",
		"LC_ALL=C")
}

// trustedDir is dir as git compares it with safe.directory: absolute, with
// symbolic links resolved.
func trustedDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// run runs git with args in dir and returns its standard output.
func run(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	cmd := command(ctx, dir, args...)
	var stdout bytes.Buffer
	stderr := &limitedBuffer{limit: maxStderr}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return nil, commandError(ctx, args, stderr, err)
	}
	return stdout.Bytes(), nil
}

// commandError builds the error for a failed git run, preferring the
// context's error when the context ended the process.
func commandError(ctx context.Context, args []string, stderr *limitedBuffer, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("git %s: %w", strings.Join(args, " "), ctxErr)
	}
	return &Error{Args: args, Stderr: strings.TrimSpace(stderr.String()), Err: err}
}

// limitedBuffer keeps the first limit bytes written to it.
type limitedBuffer struct {
	buf   bytes.Buffer
	limit int
}

// Write implements io.Writer; it never fails.
func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// String returns what was kept.
func (b *limitedBuffer) String() string { return b.buf.String() }

// checkRev rejects revisions git could read as options or that cannot be
// passed through its line-based interfaces.
func checkRev(rev string) error {
	switch {
	case rev == "":
		return fmt.Errorf("empty revision: %w", ErrUnknownRevision)
	case strings.HasPrefix(rev, "-"):
		return fmt.Errorf("revision %q starts with '-': %w", rev, ErrUnsafePath)
	case strings.ContainsAny(rev, "\x00\n\r"):
		return fmt.Errorf("revision %q contains a control character: %w", rev, ErrUnsafePath)
	}
	return nil
}

// ResolveRev returns the full commit id that rev (a branch, tag, sha,
// "HEAD~2", …) names in the repository at repoDir. A revision that names no
// commit gives an error wrapping ErrUnknownRevision.
func ResolveRev(ctx context.Context, repoDir, rev string) (string, error) {
	shas, err := ResolveRevs(ctx, repoDir, rev)
	if err != nil {
		return "", err
	}
	return shas[0], nil
}

// unknownRevError is ResolveRevs's error for the revision at index of its
// arguments that names no commit.
type unknownRevError struct {
	rev, dir string
	index    int
}

func (e *unknownRevError) Error() string {
	return fmt.Sprintf("resolve revision %q in %s: %v", e.rev, e.dir, ErrUnknownRevision)
}

func (e *unknownRevError) Unwrap() error { return ErrUnknownRevision }

// ResolveRevs is ResolveRev for several revisions at once, with one git
// process: "git cat-file --batch-check" reads each as rev^{commit}, as
// "git rev-parse --verify" would, and says "missing" (or "ambiguous") for
// one that names no commit.
func ResolveRevs(ctx context.Context, repoDir string, revs ...string) ([]string, error) {
	var in bytes.Buffer
	for _, rev := range revs {
		if err := checkRev(rev); err != nil {
			return nil, fmt.Errorf("resolve revision in %s: %w", repoDir, err)
		}
		in.WriteString(rev + "^{commit}\n")
	}
	out, err := run(ctx, repoDir, in.Bytes(), "cat-file", "--batch-check")
	if err != nil {
		return nil, fmt.Errorf("resolve revisions %q in %s: %w", revs, repoDir, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(revs) {
		return nil, fmt.Errorf("resolve revisions %q in %s: %d lines of output, want %d", revs, repoDir, len(lines), len(revs))
	}
	shas := make([]string, len(revs))
	for i, line := range lines {
		// "<id> commit <size>", or "<name> missing" where the name (the
		// revision as given) may hold spaces.
		f := strings.Fields(line)
		switch {
		case strings.HasSuffix(line, " missing") || strings.HasSuffix(line, " ambiguous"):
			return nil, &unknownRevError{rev: revs[i], index: i, dir: repoDir}
		case len(f) != 3 || f[1] != "commit" || len(f[0]) < 40:
			return nil, fmt.Errorf("resolve revision %q in %s: unexpected output %q", revs[i], repoDir, line)
		}
		shas[i] = f[0]
	}
	return shas, nil
}

// IsRepo reports whether dir is the top level of a git work tree or a bare
// repository. A subdirectory of a work tree is not a repository here: the
// other functions of this package expect paths relative to the top level.
func IsRepo(ctx context.Context, dir string) bool {
	// One git: a bare repository prints true then false and its directory;
	// a work tree false, true, its .git and the way up to its top level
	// ("" at the top); a .git directory false, false and itself.
	out, err := run(ctx, dir, nil, "rev-parse", "--is-bare-repository", "--is-inside-work-tree", "--absolute-git-dir", "--show-cdup")
	if err != nil {
		return false
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	switch {
	case len(lines) >= 3 && lines[0] == "true":
		return samePath(lines[2], dir)
	case len(lines) == 4 && lines[1] == "true":
		return lines[3] == ""
	}
	return false
}

// samePath reports whether a and b name the same directory.
func samePath(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	if errA != nil || errB != nil {
		return false
	}
	absA, errA := filepath.Abs(ra)
	absB, errB := filepath.Abs(rb)
	return errA == nil && errB == nil && absA == absB
}

// Clone clones the repository at url into destDir, which must not exist or
// be empty. Every object is fetched, so that any two revisions can be
// diffed without going back to the remote (the commands reading a
// repository talk to no remote). No work tree is checked out.
// Only the transports ParseRemote accepts are allowed, and of those only
// the one url names.
func Clone(ctx context.Context, url, destDir string) error {
	if url == "" || strings.HasPrefix(url, "-") || strings.ContainsAny(url, "\x00\n\r") {
		return fmt.Errorf("clone %q: %w", url, ErrUnsafePath)
	}
	r, err := ParseRemote(url)
	if err != nil {
		return fmt.Errorf("clone %q: %w", redactUserinfo(url), err)
	}
	cmd := gitCommand(ctx, "", r.protocol(), "clone", "--quiet", "--no-checkout", "--", url, destDir)
	stderr := &limitedBuffer{limit: maxStderr}
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("clone %s into %s: %w", redactUserinfo(url), destDir, commandError(ctx, []string{"clone", redactUserinfo(url)}, stderr, err))
	}
	return nil
}
