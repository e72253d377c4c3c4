// Package gitsrctest builds git repositories whose own configuration tries
// to run programs, for tests asserting that the fleet's git commands run
// none of them.
package gitsrctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Hostile is a repository set up to run a program at every occasion git
// offers, each program creating its own file in Markers.
type Hostile struct {
	// Dir is the work tree; Bare is a bare copy with the same
	// configuration and hooks, to be cloned from.
	Dir, Bare string
	// Base and Head are two commits; Head carries a (fake) signature so
	// that showing signatures runs gpg.program.
	Base, Head string
	// Markers is the directory the planted programs write into.
	Markers string
}

// attributes give every file a diff driver and a filter of the
// repository's configuration; z.bin gets a long-running filter process,
// which fails the git command that starts it.
const attributes = "*.py diff=evil filter=evil\n*.txt diff=evil filter=evil export-subst\n*.bin filter=evilp\n"

// hooks are the hooks planted, in .git/hooks and in core.hooksPath.
var hooks = []string{
	"post-index-change", "reference-transaction", "post-checkout", "post-merge", "pre-commit",
	"pre-push", "pre-receive", "post-receive", "update", "post-update", "push-to-checkout",
	"fsmonitor-watchman", "pre-auto-gc", "post-rewrite", "sendemail-validate", "p4-pre-submit",
}

// NewHostile writes the repository under a temporary directory of t.
func NewHostile(t testing.TB) *Hostile {
	t.Helper()
	root := t.TempDir()
	h := &Hostile{Dir: filepath.Join(root, "work"), Bare: filepath.Join(root, "bare.git"), Markers: filepath.Join(root, "markers")}
	for _, d := range []string{h.Dir, h.Markers} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git := func(dir string, args ...string) string {
		t.Helper()
		return Git(t, dir, args...)
	}
	git(h.Dir, "init", "-q", "-b", "main")
	write(t, h.Dir, ".gitattributes", attributes)
	write(t, h.Dir, "app.py", "def add(a, b):\n    return a + b\n")
	write(t, h.Dir, "version.txt", "$Format:%G? %H$\n")
	write(t, h.Dir, "z.bin", "data\n")
	git(h.Dir, "add", "-A")
	git(h.Dir, "commit", "-q", "-m", "base")
	h.Base = git(h.Dir, "rev-parse", "HEAD")
	write(t, h.Dir, "app.py", "def add(a, b):\n    return a - b\n")
	write(t, h.Dir, "util.py", "def sub(a, b):\n    return a - b\n")
	git(h.Dir, "add", "-A")
	git(h.Dir, "commit", "-q", "-m", "subtract instead")
	// The head commit gets a signature header, so that any "log
	// --show-signature" hands it to gpg.program.
	raw := git(h.Dir, "cat-file", "commit", "HEAD")
	head, rest, _ := strings.Cut(raw, "\n\n")
	signed := head + "\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\n" + rest + "\n"
	h.Head = gitIn(t, h.Dir, signed, "hash-object", "-t", "commit", "-w", "--stdin")
	git(h.Dir, "update-ref", "refs/heads/main", h.Head)
	git(h.Dir, "reset", "-q", "--hard", h.Head)
	// A change in the work tree, for reviews of a diff against it.
	write(t, h.Dir, "util.py", "def sub(a, b):\n    return b - a\n")
	git("", "clone", "-q", "--bare", "--no-local", "file://"+h.Dir, h.Bare)

	hookDir := filepath.Join(root, "hookdir")
	for _, dir := range []string{hookDir, filepath.Join(h.Dir, ".git", "hooks"), filepath.Join(h.Bare, "hooks")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range hooks {
			script := "#!/bin/sh\ntouch " + filepath.Join(h.Markers, "hook-"+name) + "\ncat >/dev/null 2>&1 || true\n"
			if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	prog := func(name, then string) string {
		return "touch " + filepath.Join(h.Markers, name) + "; " + then
	}
	script := func(name string) string {
		p := filepath.Join(root, name+".sh")
		if err := os.WriteFile(p, []byte("#!/bin/sh\ntouch "+filepath.Join(h.Markers, name)+"\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	config := [][2]string{
		{"core.fsmonitor", prog("fsmonitor", "echo")},
		{"core.hooksPath", hookDir},
		{"core.pager", prog("core-pager", "cat")},
		{"pager.diff", prog("pager-diff", "cat")},
		{"pager.log", prog("pager-log", "cat")},
		{"core.editor", prog("editor", "true")},
		{"sequence.editor", prog("sequence-editor", "true")},
		{"core.askPass", script("askpass")},
		{"core.sshCommand", prog("ssh-command", "false")},
		{"core.gitProxy", script("git-proxy")},
		{"core.alternateRefsCommand", prog("alternate-refs", "true")},
		{"credential.helper", "!" + prog("credential-helper", "true")},
		{"diff.external", prog("diff-external", "true")},
		{"diff.evil.textconv", prog("textconv", "cat")},
		{"diff.evil.command", prog("diff-command", "true")},
		{"filter.evil.smudge", prog("smudge", "cat")},
		{"filter.evil.clean", prog("clean", "cat")},
		{"filter.evilp.process", prog("filter-process", "false")},
		{"gpg.program", script("gpg")},
		{"gpg.ssh.program", script("gpg-ssh")},
		{"gpg.x509.program", script("gpg-x509")},
		{"log.showSignature", "true"},
		{"uploadpack.packObjectsHook", prog("pack-objects-hook", "git")},
		{"remote.origin.uploadpack", prog("remote-uploadpack", "git-upload-pack")},
		{"remote.origin.receivepack", prog("remote-receivepack", "git-receive-pack")},
		{"alias.rev-parse", "!" + prog("alias", "true")},
		{"alias.ls-files", "!" + prog("alias", "true")},
		{"alias.diff", "!" + prog("alias", "true")},
		{"core.untrackedCache", "true"},
	}
	for _, dir := range []string{h.Dir, h.Bare} {
		for _, kv := range config {
			git(dir, "config", kv[0], kv[1])
		}
	}
	info := filepath.Join(h.Dir, ".git", "info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, info, "attributes", attributes)
	write(t, filepath.Join(h.Bare, "info"), "attributes", attributes)
	if m := h.Ran(); len(m) > 0 {
		t.Fatalf("setting up the hostile repository ran %v", m)
	}
	return h
}

// Ran lists the markers created so far.
func (h *Hostile) Ran() []string {
	entries, _ := os.ReadDir(h.Markers)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// ProveLive runs ordinary git commands, with the user's defaults, in a copy
// of the repository and fails t unless the planted programs run: a test
// finding no marker after the fleet's commands then means something.
func (h *Hostile) ProveLive(t testing.TB) {
	t.Helper()
	plain := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = h.Dir
		cmd.Env = append(os.Environ(), "GIT_PAGER=")
		_, _ = cmd.CombinedOutput()
	}
	plain("ls-files")
	plain("log", "-1", "--format=%B", h.Head)
	plain("diff", h.Base, h.Head, "--", "app.py")
	plain("diff", "--no-ext-diff", h.Base, h.Head, "--", "app.py")
	plain("archive", "--format=tar", "-o", filepath.Join(filepath.Dir(h.Markers), "probe.tar"), h.Head)
	ran := strings.Join(h.Ran(), " ")
	for _, want := range []string{"fsmonitor", "gpg", "textconv", "diff-command", "filter-process"} {
		if !strings.Contains(ran, want) {
			t.Fatalf("plain git did not run %s (ran: %s): the hostile repository is not live", want, ran)
		}
	}
	entries, _ := os.ReadDir(h.Markers)
	for _, e := range entries {
		_ = os.Remove(filepath.Join(h.Markers, e.Name()))
	}
}

// Git runs git with the test's own setup (not the fleet's) and returns its
// trimmed output.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return gitIn(t, dir, "", args...)
}

func gitIn(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t testing.TB, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
