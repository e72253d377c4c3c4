// Package snapshot provides the head tree of a reviewed repository as a
// directory on disk, for the expert agent's read-only tools. A commit's
// tree is exported once and cached, from the local repository or from this
// worker's clone of the remote, into which the commits a review needs are
// fetched; a diff reviewed against a work tree uses the copy of that tree
// taken at submission (Capture); and when none of those is reachable from
// this worker, the changed files stored with the review are written out and
// the review records why.
//
// The cache is bounded (MaxBytes): the least recently used clones and trees
// are removed, never one that a review in any process on the host is using.
package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/reviewfleet/reviewfleet/internal/credscope"
	"github.com/reviewfleet/reviewfleet/internal/fault"
	"github.com/reviewfleet/reviewfleet/internal/gitsrc"
	"github.com/reviewfleet/reviewfleet/internal/keylock"
	"github.com/reviewfleet/reviewfleet/internal/redact"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// TokenEnv is the environment variable holding the token for the remotes
// under Cache.TokenScopes.
const TokenEnv = "REVIEWFLEET_GIT_TOKEN"

// maxReason bounds the fallback reason stored with a review.
const maxReason = 600

// Cache materialises snapshots under Dir.
type Cache struct {
	Dir   string
	Store *store.Store
	// MaxBytes bounds the cache on disk (0 = unbounded). After a build or
	// fetch, a process lists the entries to evict only when what it added
	// since its last listing fills half the room that listing left, or at
	// its first build relistEvery after it (see tally); what other
	// processes sharing Dir add is seen at that listing.
	MaxBytes int64
	// TokenFile holds the token for remotes under TokenScopes whose URL
	// carries none (a mounted secret, read at each fetch so a rotated
	// token is picked up). TokenEnv, when set, takes precedence.
	TokenFile string
	// TokenScopes are the URL prefixes the token of TokenEnv or TokenFile
	// belongs to (snapshot.git_token_hosts). A remote elsewhere is cloned
	// without it; empty sends it nowhere.
	TokenScopes credscope.Set
	// HostToken returns the token for an https remote on host (as in the
	// URL, e.g. "github.com") at path ("/OWNER/REPO.git"), or "" when that
	// host gets none: GITHUB_TOKEN or a GitHub App installation token for
	// the GitHub the pull requests come from. It is asked only about URLs
	// whose host is written plainly (no user, escape or trailing dot); a
	// token of TokenEnv or TokenFile for the remote comes first.
	HostToken func(ctx context.Context, host, path string) (string, error)
	// Log receives fetch fallbacks and evictions (optional).
	Log *slog.Logger
	// Retryable, when set, reports whether the task asking for a snapshot
	// will be tried again if it fails. While it will, a remote that cannot
	// be cloned or fetched from (a network error, a throttling server) is
	// returned as an error instead of falling back to the changed files.
	Retryable func(ctx context.Context) bool

	locks keylock.Locks
	warm  warming
	sweep sweeps
	tally tally
}

// lock serialises work on key within this process.
func (c *Cache) lock(key string) func() { return c.locks.Lock(key) }

// Root returns the directory holding the review's head tree. It does not
// keep the tree from eviction: callers that read it afterwards use Acquire.
func (c *Cache) Root(ctx context.Context, r review.Review) (string, error) {
	root, release, err := c.Acquire(ctx, r)
	if err != nil {
		return "", err
	}
	release()
	return root, nil
}

// Acquire returns the directory holding the review's head tree and keeps it
// from eviction until release is called. When only the stored changed
// files can be given, the review records why.
func (c *Cache) Acquire(ctx context.Context, r review.Review) (root string, release func(), err error) {
	reason := r.SnapshotFallback
	switch {
	case reason != "":
		// An earlier expert run of this review fell back: later ones see
		// the same files, and do not try the remote again.
	case r.Source == review.SourceGit || r.Source == review.SourceURL:
		if r.HeadSHA == "" {
			reason = "the review has no head commit"
			break
		}
		dest := c.treeDir(r.HeadSHA)
		rel, err := c.lease(ctx, dest, func() error { return c.export(ctx, r, dest) })
		if err == nil {
			return dest, rel, nil
		}
		if ctx.Err() != nil {
			return "", nil, err
		}
		if cerr := cacheFault(err); cerr != nil {
			// The changed files would go into the same cache: falling
			// back would only fail again, and hide the cause.
			return "", nil, cerr
		}
		if r.Source == review.SourceURL && c.Retryable != nil && c.Retryable(ctx) {
			return "", nil, fmt.Errorf("head tree of %s, tried again later before falling back to the changed files: %w", r.HeadSHA, err)
		}
		reason = err.Error()
		if len(reason) > maxReason {
			reason = strings.ToValidUTF8(reason[:maxReason], "") + "…"
		}
	case r.Source == review.SourceDiff && r.Snapshot == "":
		// A diff reviewed on its own: there never was a tree to copy.
		reason = "the diff was submitted without its repository (no --repo), so only the files it changes are available"
	case r.Source == review.SourceDiff:
		if st, err := os.Stat(r.Snapshot); err == nil && st.IsDir() {
			return r.Snapshot, func() {}, nil
		}
		reason = fmt.Sprintf("the copy of the work tree taken at submission (%s) is not on this worker", r.Snapshot)
	default:
		reason = fmt.Sprintf("unknown source %q", r.Source)
	}
	if c.Log != nil && r.SnapshotFallback == "" {
		c.Log.Warn("snapshot falls back to the changed files", "review", r.ID, "reason", reason)
	}
	if c.Store != nil && r.SnapshotFallback == "" {
		if err := c.Store.SetSnapshotFallback(ctx, r.ID, reason); err != nil {
			return "", nil, err
		}
	}
	dest := filepath.Join(c.Dir, "reviews", r.ID)
	rel, err := c.lease(ctx, dest, func() error { return c.fromStore(ctx, r, dest) })
	if err != nil {
		if cerr := cacheFault(err); cerr != nil {
			return "", nil, cerr
		}
		return "", nil, err
	}
	return dest, rel, nil
}

// cacheFault names a local resource refusing the cache (read-only, full,
// not permitted, out of descriptors), or returns nil for any other error
// (a missing path among them: the export's source may be what is missing,
// and the changed files still serve). The name leads the item's error,
// and so the report's line for it.
func cacheFault(err error) error {
	what, ok := fault.Resource(err)
	switch {
	case !ok:
		return nil
	case fault.Unwritable(err):
		return fmt.Errorf("snapshot cache not writable: %w", err)
	case fault.Full(err):
		return fmt.Errorf("snapshot cache full: %w", err)
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return fmt.Errorf("snapshot cache unusable (%s): %w", what, err)
	}
	return nil
}

// export writes the tree of the review's head commit into dest, from the
// local repository or from this worker's clone of the remote.
func (c *Cache) export(ctx context.Context, r review.Review, dest string) error {
	// The tree is exported and redacted in a temporary directory first, so
	// a tree under dest is always a redacted one.
	tmp := dest + ".redact-tmp"
	_ = os.RemoveAll(tmp)
	if err := c.exportRaw(ctx, r, tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := c.redact(ctx, r, tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("write snapshot of %s: %w", r.ID, err)
	}
	return nil
}

// exportRaw writes the tree of the review's head commit into dest as it is
// in the repository.
func (c *Cache) exportRaw(ctx context.Context, r review.Review, dest string) error {
	if r.Source == review.SourceGit {
		if !gitsrc.IsRepo(ctx, r.Snapshot) {
			return fmt.Errorf("the repository %s is not on this worker", r.Snapshot)
		}
		return gitsrc.Export(ctx, r.Snapshot, r.HeadSHA, dest)
	}
	remote, err := c.Remote(ctx, r.Repo)
	if err != nil {
		return err
	}
	return c.WithRepo(ctx, remote, func(dir string) error {
		if err := c.ensureCommit(ctx, dir, remote, r.HeadSHA); err != nil {
			return err
		}
		return gitsrc.Export(ctx, dir, r.HeadSHA, dest)
	})
}

// redact redacts the tree at dir, the review's changed files first so that
// their markers are numbered as in the files stored with the review.
func (c *Cache) redact(ctx context.Context, r review.Review, dir string) error {
	var first []string
	if c.Store != nil {
		files, err := c.Store.ListFiles(ctx, r.ID)
		if err != nil {
			return fmt.Errorf("list files of %s: %w", r.ID, err)
		}
		for _, f := range files {
			if f.Content != nil {
				first = append(first, f.Path)
			}
		}
	}
	return RedactTree(ctx, dir, first)
}

// ensureCommit fetches sha into the clone at dir unless it is there: by its
// id where the server allows it, else with every branch and tag.
func (c *Cache) ensureCommit(ctx context.Context, dir string, remote gitsrc.Remote, sha string) error {
	if gitsrc.HasCommit(ctx, dir, sha) {
		return nil
	}
	_, errRev := gitsrc.FetchRev(ctx, dir, remote, sha)
	if errRev == nil {
		return nil
	}
	if ctx.Err() != nil {
		return errRev
	}
	if c.Log != nil {
		c.Log.Info("fetch by commit id refused, fetching every branch", "repo", remote.URL, "commit", sha, "err", errRev)
	}
	if err := gitsrc.FetchRefs(ctx, dir, remote); err != nil {
		return fmt.Errorf("fetch %s: %w", sha, err)
	}
	if !gitsrc.HasCommit(ctx, dir, sha) {
		return fmt.Errorf("commit %s is on no branch or tag of %s, and the server refused it by id", sha, remote.URL)
	}
	return nil
}

// Remote parses a repository URL and attaches the credential configured
// for its host when the URL carries none of its own: the token of TokenEnv
// or TokenFile for a remote under TokenScopes, else HostToken's. Any other
// remote is cloned anonymously.
func (c *Cache) Remote(ctx context.Context, raw string) (gitsrc.Remote, error) {
	remote, err := gitsrc.ParseRemote(raw)
	if err != nil {
		return remote, err
	}
	if remote.Token != "" {
		return remote, nil // the submitter's own, for the host they named
	}
	if c.TokenScopes.MatchesString(remote.URL) {
		remote.Token = c.token()
	}
	if remote.Token == "" && c.HostToken != nil && strings.HasPrefix(remote.URL, "https://") {
		if u, err := url.Parse(remote.URL); err == nil {
			origin, err := credscope.Parse("https://" + u.Host)
			if err != nil || !origin.MatchesString(remote.URL) {
				return remote, nil
			}
			if remote.Token, err = c.HostToken(ctx, strings.ToLower(u.Host), u.Path); err != nil {
				return remote, fmt.Errorf("credentials for %s: %w", remote.URL, err)
			}
		}
	}
	return remote, nil
}

// token reads the token of TokenEnv or TokenFile, or returns "".
func (c *Cache) token() string {
	if t := strings.TrimSpace(os.Getenv(TokenEnv)); t != "" {
		return t
	}
	if c.TokenFile == "" {
		return ""
	}
	data, err := os.ReadFile(c.TokenFile)
	if err != nil {
		if c.Log != nil {
			c.Log.Warn("read snapshot.git_token_file", "err", err)
		}
		return ""
	}
	return strings.TrimSpace(string(data))
}

// RepoDir is where the clone of a remote lives: named by a digest of its
// URL without credentials, so that the same repository reached with
// different tokens shares one clone and no token shows in a path.
func (c *Cache) RepoDir(remote gitsrc.Remote) string {
	sum := sha256.Sum256([]byte(remote.URL))
	return filepath.Join(c.Dir, "repos", hex.EncodeToString(sum[:8]))
}

// WithRepo runs fn with exclusive use of this host's clone of remote,
// cloning it first when missing: one clone or fetch at a time per
// repository, across the processes sharing the cache.
func (c *Cache) WithRepo(ctx context.Context, remote gitsrc.Remote, fn func(dir string) error) error {
	dir := c.RepoDir(remote)
	grown, err := c.exclusive(ctx, dir, func() error {
		// A clone made by an earlier version (with a work tree) is
		// replaced: branches cannot be fetched into it.
		if !gitsrc.IsBareRepo(ctx, dir) {
			if err := os.RemoveAll(dir); err != nil {
				return fmt.Errorf("clear %s: %w", dir, err)
			}
			if err := gitsrc.Mirror(ctx, remote, dir); err != nil {
				return err
			}
		}
		return fn(dir)
	})
	if err == nil {
		c.evict(ctx, grown)
	}
	return err
}

// fromStore writes the changed files' head contents into dest.
func (c *Cache) fromStore(ctx context.Context, r review.Review, dest string) error {
	if c.Store == nil {
		return errors.New("no store to read the changed files from")
	}
	files, err := c.Store.ListFiles(ctx, r.ID)
	if err != nil {
		return err
	}
	tmp := dest + ".tmp"
	_ = os.RemoveAll(tmp)
	for _, f := range files {
		if f.Content == nil {
			continue
		}
		rel := filepath.Clean(filepath.FromSlash(f.Path))
		if !filepath.IsLocal(rel) {
			continue // never write outside the snapshot
		}
		p := filepath.Join(tmp, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write snapshot of %s: %w", r.ID, err)
		}
		if err := os.WriteFile(p, []byte(*f.Content), 0o644); err != nil {
			return fmt.Errorf("write snapshot of %s: %w", r.ID, err)
		}
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	if err := RedactTree(ctx, tmp, nil); err != nil { // stored contents are redacted already: a second look costs little
		return fmt.Errorf("write snapshot of %s: %w", r.ID, err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("write snapshot of %s: %w", r.ID, err)
	}
	return nil
}

// treeDir is where the redacted head tree of commit sha is cached. Trees
// cached unredacted by older versions, or redacted by older rules, are never
// served: the rules' version is part of the name, and eviction removes the
// stale ones like any tree not used for a while.
func (c *Cache) treeDir(sha string) string {
	return filepath.Join(c.Dir, "trees-redacted", sha+"-"+redact.RulesVersion())
}
