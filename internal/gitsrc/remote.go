package gitsrc

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// Remote is a remote repository and the credential to reach it. URL never
// holds the credential: it is what may be stored, shown and logged, and what
// a clone records as its origin. The credential reaches git only through the
// environment of the processes that talk to the remote.
type Remote struct {
	// URL is the repository's address without user information.
	URL string
	// User and Token authenticate https requests (HTTP basic, the form
	// GitHub, GitLab and Bitbucket accept for tokens). User defaults to
	// "x-access-token" when only a token is known.
	User, Token string
}

// Low-speed limits of http(s) transfers: a server sending less than
// lowSpeedLimit bytes a second for lowSpeedTime seconds is given up on, so a
// stalled server cannot hold a worker forever.
const (
	lowSpeedLimit = 1000
	lowSpeedTime  = 60
)

// ParseRemote splits raw into a Remote. Credentials written into a URL
// ("https://user:token@host/repo", "https://token@host/repo") move to User
// and Token; an ssh user ("ssh://git@host/repo", "git@host:repo") is no
// secret and stays. Only the http(s), ssh, git and file transports and
// scp-like ssh addresses are accepted.
func ParseRemote(raw string) (Remote, error) {
	if raw == "" || strings.HasPrefix(raw, "-") || strings.ContainsAny(raw, "\x00\n\r") {
		return Remote{}, fmt.Errorf("remote %q: %w", redactUserinfo(raw), ErrUnsafePath)
	}
	if !strings.Contains(raw, "://") {
		if strings.Contains(raw, "@") && strings.Contains(raw, ":") {
			return Remote{URL: raw}, nil // git@host:org/repo
		}
		return Remote{}, fmt.Errorf("remote %q is not a URL", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Remote{}, fmt.Errorf("remote %q: %w", redactUserinfo(raw), errors.Unwrap(err))
	}
	switch u.Scheme {
	case "https", "http", "ssh", "git", "file":
	default:
		return Remote{}, fmt.Errorf("remote %q: transport %q is not allowed", redactUserinfo(raw), u.Scheme)
	}
	r := Remote{}
	if u.User != nil && (u.Scheme == "https" || u.Scheme == "http") {
		pass, hasPass := u.User.Password()
		if hasPass {
			r.User, r.Token = u.User.Username(), pass
		} else {
			r.Token = u.User.Username()
		}
		u.User = nil
	}
	if u.User != nil {
		// ssh://user:password@host: keep the user ssh needs, never the
		// password.
		u.User = url.User(u.User.Username())
	}
	// A repository URL needs no query: tokens passed there are dropped.
	u.RawQuery, u.ForceQuery, u.Fragment = "", false, ""
	r.URL = u.String()
	return r, nil
}

// redactUserinfo hides whatever stands between "://" and "@" in s, for
// messages about a URL that could not be parsed.
func redactUserinfo(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		return scheme + "://REDACTED@" + rest[at+1:]
	}
	return s
}

// env returns the environment entries that configure git for this remote:
// low-speed limits on http(s), and the credential as an Authorization
// header scoped to the remote's host, with redirects refused. GIT_CONFIG_COUNT entries are neither
// written to a configuration file nor shown by git in its messages.
func (r Remote) env() []string {
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return nil
	}
	kv := [][2]string{
		{"http.lowSpeedLimit", strconv.Itoa(lowSpeedLimit)},
		{"http.lowSpeedTime", strconv.Itoa(lowSpeedTime)},
	}
	if r.Token != "" {
		user := r.User
		if user == "" {
			user = "x-access-token"
		}
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + r.Token))
		scope := u.Scheme + "://" + u.Host + "/"
		kv = append(kv, [2]string{"http." + scope + ".extraHeader", "Authorization: Basic " + auth},
			// git sends extra headers to wherever a redirect leads, for
			// the rest of the command: an authenticated remote is not
			// followed anywhere.
			[2]string{"http.followRedirects", "false"})
	}
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(kv))}
	for i, e := range kv {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, e[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, e[1]))
	}
	return env
}

// protocol is the one git transport r needs: its URL's scheme, ssh for
// an scp-like address.
func (r Remote) protocol() string {
	scheme, _, ok := strings.Cut(r.URL, "://")
	if !ok {
		return "ssh"
	}
	return strings.ToLower(scheme)
}

// runRemote runs a git command that talks to r, allowing r's transport
// and no other (a redirect or an alternate cannot switch to another).
func runRemote(ctx context.Context, dir string, r Remote, args ...string) error {
	cmd := gitCommand(ctx, dir, r.protocol(), args...)
	cmd.Env = append(cmd.Env, r.env()...)
	if _, set := os.LookupEnv("GIT_SSH_COMMAND"); !set {
		// ssh asks for passwords and host keys on the terminal whatever
		// GIT_TERMINAL_PROMPT says; and a silent server must not hang.
		cmd.Env = append(cmd.Env, "GIT_SSH_COMMAND=ssh -o BatchMode=yes -o ConnectTimeout=30 -o ServerAliveInterval=15 -o ServerAliveCountMax=4")
	}
	stderr := &limitedBuffer{limit: maxStderr}
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return unreachable(r.URL, commandError(ctx, args, stderr, err))
	}
	return nil
}

// Mirror clones r into destDir as a bare repository holding every branch
// and tag with all their objects, so that trees can be exported without
// going back to the remote. destDir must not exist or be empty. The clone
// records r.URL, without credentials, as its origin.
func Mirror(ctx context.Context, r Remote, destDir string) error {
	if r.URL == "" || strings.HasPrefix(r.URL, "-") {
		return fmt.Errorf("clone %q: %w", r.URL, ErrUnsafePath)
	}
	if err := runRemote(ctx, "", r, "clone", "--quiet", "--bare", "--no-tags", "--", r.URL, destDir); err != nil {
		return fmt.Errorf("clone %s: %w", r.URL, err)
	}
	return nil
}

// FetchRefs brings the bare clone at dir up to date with every branch and
// tag of its origin, r.
func FetchRefs(ctx context.Context, dir string, r Remote) error {
	err := runRemote(ctx, dir, r, "fetch", "--quiet", "--prune", "--no-write-fetch-head", "--", r.URL,
		"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
	if err != nil {
		return fmt.Errorf("fetch the branches and tags of %s: %w", r.URL, err)
	}
	return nil
}

// FetchRev fetches one revision (a commit id, or a ref the remote has, such
// as "refs/pull/7/head") from r into the clone at dir and keeps it under
// refs/reviewfleet/, so that it stays when the remote drops it. It returns
// the commit id. Servers that refuse to serve a commit id nobody asked for by
// name (older git servers without allowReachableSHA1InWant) answer an error.
func FetchRev(ctx context.Context, dir string, r Remote, rev string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", fmt.Errorf("fetch %s: %w", rev, err)
	}
	if strings.ContainsAny(rev, ":^~*?[\\ ") {
		return "", fmt.Errorf("fetch %q: not a commit id or a ref name: %w", rev, ErrUnsafePath)
	}
	local := "refs/reviewfleet/" + strings.TrimPrefix(rev, "refs/")
	if err := runRemote(ctx, dir, r, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", r.URL, "+"+rev+":"+local); err != nil {
		return "", fmt.Errorf("fetch %s from %s: %w", rev, r.URL, err)
	}
	return ResolveRev(ctx, dir, local)
}

// IsBareRepo reports whether dir is a bare repository.
func IsBareRepo(ctx context.Context, dir string) bool {
	out, err := run(ctx, dir, nil, "rev-parse", "--is-bare-repository", "--absolute-git-dir")
	if err != nil {
		return false
	}
	bare, gitDir, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return bare == "true" && samePath(gitDir, dir)
}

// HasCommit reports whether the repository at dir holds the commit sha.
func HasCommit(ctx context.Context, dir, sha string) bool {
	if checkRev(sha) != nil {
		return false
	}
	_, err := run(ctx, dir, nil, "cat-file", "-e", sha+"^{commit}")
	return err == nil
}
