// Package submit prepares a change for review — reads the diff from a local
// git repository, a diff file or a remote URL, parses it into files with
// new-side line numbers, sets aside binary and ignored files, reads the
// head-side contents, chooses per-file or chunked intent — and stores it as
// a new review whose first stage is ready to run.
package submit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/internal/diff"
	"github.com/reviewfleet/reviewfleet/internal/gitsrc"
	"github.com/reviewfleet/reviewfleet/internal/pipeline"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/internal/snapshot"
	"github.com/reviewfleet/reviewfleet/stages/intent"
)

// Request names the change to review.
type Request struct {
	// Repo is a local repository directory or a remote git URL. With
	// DiffFile it is only where file contents are read from.
	Repo string
	// Base and Head are revisions of Repo (branches, tags, SHAs).
	Base, Head string
	// DiffFile is a unified diff to review instead of Base..Head.
	DiffFile string
	// Purpose states what the change is for (a pull request's title and
	// description). Empty: the commit messages of Base..Head, or the text
	// before the first file of a diff file (a format-patch message).
	Purpose string
	// HeadRepo, when set, is the remote the Head commit is fetched from
	// when Repo lacks it: a pull request's fork.
	HeadRepo string
	// BatchID groups the review into a batch (optional).
	BatchID string
	// Repos holds this host's clones of remote repositories.
	Repos Repos
	// CacheDir holds clones of remote repositories when Repos is nil.
	CacheDir string
	// Since is an earlier review of the same change line to review
	// incrementally against: files whose result key did not change keep
	// its findings. Empty: the newest finished review of the same
	// repository and ChangeKey, if any.
	Since string
	// ChangeKey names the change line (for example "pr:owner/repo#12");
	// empty for none.
	ChangeKey string
	// Origin is who the request comes from: only FromOperator may name a
	// local directory, a file:// URL or a diff file. The zero value
	// accepts remote URLs only.
	Origin Origin
}

// Repos gives exclusive use of this host's clone of a remote repository.
// *snapshot.Cache implements it.
type Repos interface {
	// Remote parses a repository URL and attaches its credential.
	Remote(ctx context.Context, raw string) (gitsrc.Remote, error)
	// WithRepo runs fn with the clone of remote, cloning it when missing.
	WithRepo(ctx context.Context, remote gitsrc.Remote, fn func(dir string) error) error
}

// ReasonNotUTF8 is the skip reason of a file whose path, diff or content is
// not UTF-8 text.
const ReasonNotUTF8 = "not_utf8"

// utf8Safe replaces invalid UTF-8 and NUL bytes (which Postgres text cannot
// hold) in a path or message so it can be stored and shown.
func utf8Safe(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// ErrEmptyChange is returned when the change has no files at all.
var ErrEmptyChange = errors.New("the change is empty: no files differ")

// IsRemote reports whether repo looks like a remote git URL.
func IsRemote(repo string) bool {
	return strings.Contains(repo, "://") || (strings.HasPrefix(repo, "git@") && strings.Contains(repo, ":"))
}

// Prepare reads and parses the change and returns the review to store.
// A remote repository is read from this host's clone of it, brought up to
// date first; the review stores its URL without credentials.
func Prepare(ctx context.Context, cfg config.Config, req Request) (review.NewReview, error) {
	if err := CheckOrigin(req, cfg.Snapshot.AllowLoopbackHTTP); err != nil {
		return review.NewReview{}, err
	}
	if req.DiffFile != "" || !IsRemote(req.Repo) {
		return prepare(ctx, cfg, req, nil)
	}
	repos := req.Repos
	if repos == nil {
		repos = &snapshot.Cache{Dir: req.CacheDir}
	}
	remote, err := repos.Remote(ctx, req.Repo)
	if err != nil {
		return review.NewReview{}, fmt.Errorf("--repo: %w", err)
	}
	var nr review.NewReview
	err = repos.WithRepo(ctx, remote, func(dir string) error {
		// Branch names move: fetch them unless both ends are commit ids
		// the clone already holds.
		if !isCommitID(req.Base) || !isCommitID(req.Head) ||
			!gitsrc.HasCommit(ctx, dir, req.Base) || !gitsrc.HasCommit(ctx, dir, req.Head) {
			if err := gitsrc.FetchRefs(ctx, dir, remote); err != nil {
				return err
			}
		}
		if err := fetchHead(ctx, repos, dir, req); err != nil {
			return err
		}
		local := req
		local.Repo = dir
		nr, err = prepare(ctx, cfg, local, &remote)
		return err
	})
	nr.Source, nr.Repo = review.SourceURL, remote.URL
	var ue *gitsrc.UnreachableError
	if errors.As(err, &ue) {
		return nr, ue // one sentence, not the clone, fetch and command that led to it
	}
	return nr, err
}

// fetchHead fetches the head commit of a pull request from a fork into
// the base repository's clone, when the clone lacks it.
func fetchHead(ctx context.Context, repos Repos, dir string, req Request) error {
	if req.HeadRepo == "" || req.HeadRepo == req.Repo || !isCommitID(req.Head) || gitsrc.HasCommit(ctx, dir, req.Head) {
		return nil
	}
	remote, err := repos.Remote(ctx, req.HeadRepo)
	if err != nil {
		return fmt.Errorf("head repository: %w", err)
	}
	if _, err := gitsrc.FetchRev(ctx, dir, remote, req.Head); err != nil {
		return fmt.Errorf("fetch the head commit from %s: %w", remote.URL, err)
	}
	return nil
}

// isCommitID reports whether rev is a full hexadecimal commit id.
func isCommitID(rev string) bool {
	if len(rev) != 40 && len(rev) != 64 {
		return false
	}
	for _, c := range rev {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// resolve resolves rev in the repository at dir. A revision a clone of a
// remote lacks (a pull request's ref, a commit on no branch) is fetched.
func resolve(ctx context.Context, dir string, remote *gitsrc.Remote, rev string) (string, error) {
	sha, err := gitsrc.ResolveRev(ctx, dir, rev)
	if err == nil || remote == nil || !errors.Is(err, gitsrc.ErrUnknownRevision) {
		return sha, err
	}
	sha, ferr := gitsrc.FetchRev(ctx, dir, *remote, rev)
	if ferr != nil {
		return "", fmt.Errorf("%w; fetching it: %v", err, ferr)
	}
	return sha, nil
}

// prepare reads the change from a local repository or a diff file; remote,
// when not nil, is the origin of the repository (a cached clone).
func prepare(ctx context.Context, cfg config.Config, req Request, remote *gitsrc.Remote) (review.NewReview, error) {
	nr := review.NewReview{
		BatchID: req.BatchID, BaseRef: req.Base, HeadRef: req.Head,
		SkippedStages: pipeline.SkippedStages(cfg.Harness), Config: pipeline.Snapshot(cfg),
		Timeout: cfg.Scheduler.ReviewTimeout,
	}
	var raw []byte
	// read gives the head side of the changed files; readConfig the
	// revision whose .reviewfleet.yaml files govern the review.
	var read, readConfig readFiles
	switch {
	case req.DiffFile != "":
		data, err := readDiffFile(req.DiffFile)
		if err != nil {
			return nr, err
		}
		raw = data
		nr.Source, nr.Repo = review.SourceDiff, req.Repo
		nr.Purpose = preamble(data)
		if req.Repo != "" {
			abs, err := filepath.Abs(req.Repo)
			if err != nil {
				return nr, fmt.Errorf("resolve --repo %s: %w", req.Repo, err)
			}
			nr.Repo, nr.Snapshot = abs, abs
			read = func(paths []string, limit int64) (map[string]gitsrc.Blob, error) {
				return gitsrc.ReadFiles(ctx, abs, "", paths, limit)
			}
		}
		nr.BaseRef, nr.HeadRef = "", filepath.Base(req.DiffFile)
	case req.Repo != "":
		if req.Base == "" || req.Head == "" {
			return nr, errors.New("reviewing a repository needs both --base and --head")
		}
		dir := req.Repo
		nr.Source = review.SourceGit
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nr, fmt.Errorf("resolve --repo %s: %w", dir, err)
		}
		if !gitsrc.IsRepo(ctx, abs) {
			return nr, fmt.Errorf("%s is not a git repository (give --diff FILE to review a diff)", abs)
		}
		dir, nr.Repo = abs, abs
		// Both at once when the repository has both; one at a time
		// otherwise, fetching what a clone lacks and naming what failed.
		if shas, err := gitsrc.ResolveRevs(ctx, dir, req.Base, req.Head); err == nil {
			nr.BaseSHA, nr.HeadSHA = shas[0], shas[1]
		} else {
			if nr.BaseSHA, err = resolve(ctx, dir, remote, req.Base); err != nil {
				return nr, fmt.Errorf("resolve --base: %w", err)
			}
			if nr.HeadSHA, err = resolve(ctx, dir, remote, req.Head); err != nil {
				return nr, fmt.Errorf("resolve --head: %w", err)
			}
		}
		if raw, err = gitsrc.Diff(ctx, dir, nr.BaseSHA, nr.HeadSHA); err != nil {
			return nr, fmt.Errorf("diff %s..%s: %w", req.Base, req.Head, err)
		}
		nr.Snapshot = dir
		if req.Purpose == "" {
			if msg, err := gitsrc.Log(ctx, dir, nr.BaseSHA, nr.HeadSHA); err == nil {
				nr.Purpose = msg
			}
		}
		head := nr.HeadSHA
		read = func(paths []string, limit int64) (map[string]gitsrc.Blob, error) {
			return gitsrc.ReadFiles(ctx, dir, head, paths, limit)
		}
		// The head is written by whoever opened the change: a
		// configuration read there could ignore every file it adds or
		// raise every threshold. The base is what the repository already
		// agreed to; a change to the configuration takes effect from the
		// next review on.
		base := nr.BaseSHA
		readConfig = func(paths []string, limit int64) (map[string]gitsrc.Blob, error) {
			return gitsrc.ReadFiles(ctx, dir, base, paths, limit)
		}
	default:
		return nr, errors.New("nothing to review: give --repo DIR with --base and --head, or --diff FILE")
	}

	if req.Purpose != "" {
		nr.Purpose = req.Purpose
	}
	nr.Purpose, nr.Repo = utf8Safe(nr.Purpose), utf8Safe(nr.Repo)
	// Errors name the input, so a batch of reviews tells which one failed.
	input := req.DiffFile
	if input == "" {
		input = req.Repo + " " + req.Base + ".." + req.Head
	}
	files, err := diff.Parse(raw)
	if err != nil {
		return nr, fmt.Errorf("parse diff %s: %w", input, err)
	}
	if len(files) == 0 {
		if len(bytes.TrimSpace(raw)) > 0 && req.DiffFile != "" {
			return nr, fmt.Errorf("%s holds no file headers (diff --git, or ---/+++ lines): is it a unified diff?", req.DiffFile)
		}
		return nr, fmt.Errorf("%s: %w", input, ErrEmptyChange)
	}
	if err := checkPathLengths(files); err != nil {
		return nr, fmt.Errorf("%s: %w", input, err)
	}
	if files, err = dedupe(files); err != nil {
		return nr, fmt.Errorf("%s: %w", input, err)
	}
	if nr.Files, err = buildFiles(cfg.Intent, cfg.Expert.SandboxDeny, files, read); err != nil {
		return nr, err
	}
	fromBase := readConfig != nil
	if !fromBase {
		// A diff reviewed against a work tree: the tree is the
		// submitter's own checkout, read where it stands.
		readConfig = read
	}
	if cfg.RepoConfig.Enabled {
		applyRepoConfig(&nr, readConfig, fromBase)
	}
	tree := nr.Source == review.SourceDiff && nr.Snapshot != ""
	if tree {
		markLinks(nr.Files, nr.Snapshot)
	}
	if err := checkContents(nr.Files, req, read != nil); err != nil {
		return nr, err
	}
	if tree {
		if err := checkPatched(nr.Snapshot, files, nr.Files); err != nil {
			return nr, err
		}
		snap, err := captureTree(ctx, cfg, req.CacheDir, nr.Snapshot, nr.Files)
		if err != nil {
			return nr, err
		}
		nr.Snapshot = snap
	}
	redactReview(&nr) // before anything is stored or shown to a model
	nr.IntentMode, nr.Items = plan(cfg.Intent, nr.Files)
	return nr, nil
}

func readDiffFile(name string) ([]byte, error) {
	if name == "-" {
		return nil, errors.New("reading a diff from standard input is not supported; save it to a file")
	}
	// A device or a pipe (/dev/zero, a FIFO) could be read forever.
	if st, err := os.Stat(name); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read diff %s: not a regular file (%s)", name, st.Mode().Type())
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read diff: %w", err)
	}
	return data, nil
}

// readFiles reads the head-side contents of many files at once. Absent
// files are missing from the result; files over limit bytes have no data.
type readFiles func(paths []string, limit int64) (map[string]gitsrc.Blob, error)

// buildFiles turns parsed diff files into stored files: skipped ones keep
// their reason, reviewed ones get their changed lines and head content. The
// contents of all reviewed files are read in one pass. deny is the
// expert's sandbox deny list: a file the expert may not open is sent to no
// stage, and neither its diff nor its content is stored.
func buildFiles(cfg config.Intent, deny []string, files []*diff.File, read readFiles) ([]review.File, error) {
	out := make([]review.File, 0, len(files))
	var reviewed []int
	for i, f := range files {
		p := f.Path()
		add, del := f.Stats()
		sf := review.File{
			Path: utf8Safe(p), Change: string(f.Status), Binary: f.Binary, Additions: add, Deletions: del,
			Diff: f.Text(), ChangedLines: f.ChangedNewLines(),
		}
		if f.OldPath != "" && f.OldPath != p {
			sf.OldPath = utf8Safe(f.OldPath)
		}
		if !utf8.ValidString(p) || !utf8.ValidString(sf.Diff) {
			// Text in another encoding (Latin-1 sources, binary data git
			// took for text): nothing a model could read reliably.
			sf.SkipReason, sf.Diff = ReasonNotUTF8, ""
		} else if skip, reason := diff.Classify(f, diff.ClassifyOptions{MaxFileDiffChars: cfg.MaxFileDiffChars, IgnoreGlobs: cfg.Ignore, Deny: deny}); skip {
			sf.SkipReason = reason
			if reason == diff.ReasonTooLarge || reason == diff.ReasonBinary || reason == diff.ReasonDenied {
				sf.Diff = "" // not stored: nothing will read it
			}
		} else {
			reviewed = append(reviewed, i)
		}
		out = append(out, sf)
	}
	var blobs map[string]gitsrc.Blob
	if read != nil && len(reviewed) > 0 {
		paths := make([]string, 0, len(reviewed))
		for _, i := range reviewed {
			if files[i].Status != diff.StatusDeleted {
				paths = append(paths, files[i].Path())
			}
		}
		var err error
		if blobs, err = read(paths, int64(cfg.MaxFileBytes)); err != nil {
			return nil, fmt.Errorf("read the changed files: %w", err)
		}
	}
	for _, i := range reviewed {
		b, ok := blobs[files[i].Path()]
		out[i].Content, out[i].SkipReason = content(cfg, files[i], b, ok)
	}
	return out, nil
}

// content turns the head-side blob of a file into its stored text. When no
// source gave it, an added file is rebuilt from its diff (every line is new).
func content(cfg config.Intent, f *diff.File, b gitsrc.Blob, found bool) (*string, string) {
	if !found {
		if f.Status == diff.StatusAdded {
			s := rebuild(f)
			return &s, ""
		}
		return nil, ""
	}
	if b.Data == nil && b.Size > 0 || b.Size > int64(cfg.MaxFileBytes) {
		return nil, diff.ReasonTooLarge
	}
	data := b.Data
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, diff.ReasonBinary
	}
	if !utf8.Valid(data) {
		return nil, ReasonNotUTF8
	}
	s := string(data)
	return &s, ""
}

func rebuild(f *diff.File) string {
	var b strings.Builder
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			if l.Kind != diff.Deleted {
				b.WriteString(l.Text)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// Plan cuts the reviewed files other than those in skip into intent items
// (see plan); an incremental review plans only the files it re-reviews.
func Plan(cfg config.Intent, files []review.File, skip map[string]bool) (string, []review.Item) {
	var rest []review.File
	for _, f := range files {
		if !skip[f.Path] {
			rest = append(rest, f)
		}
	}
	return plan(cfg, rest)
}

// plan chooses the intent mode and cuts the reviewed files into items:
// one per file, or — for large changes — chunks of several files.
func plan(cfg config.Intent, files []review.File) (string, []review.Item) {
	var reviewed []review.File
	chars := 0
	for _, f := range files {
		if f.SkipReason == "" {
			reviewed = append(reviewed, f)
			chars += len(f.Diff)
		}
	}
	mode := intent.ModePerFile
	if len(reviewed) >= cfg.ChunkFilesThreshold || chars >= cfg.ChunkCharsThreshold {
		mode = intent.ModeChunked
	}
	var items []review.Item
	add := func(paths []string) {
		prefix := "p"
		if mode == intent.ModeChunked {
			prefix = "c"
		}
		payload, _ := json.Marshal(intent.ItemPayload{Mode: mode, Files: paths})
		items = append(items, review.Item{Stage: review.StageIntent, Key: fmt.Sprintf("%s%04d", prefix, len(items)+1), Payload: payload})
	}
	if mode == intent.ModePerFile {
		for _, f := range reviewed {
			add([]string{f.Path})
		}
		return mode, items
	}
	var cur []string
	size := 0
	for _, f := range reviewed {
		if len(cur) > 0 && (len(cur) >= cfg.ChunkMaxFiles || size+len(f.Diff) > cfg.ChunkMaxChars) {
			add(cur)
			cur, size = nil, 0
		}
		cur = append(cur, f.Path)
		size += len(f.Diff)
	}
	if len(cur) > 0 {
		add(cur)
	}
	return mode, items
}

// preamble returns the message before the first file of a diff (the
// commit message of a format-patch file), without mail headers.
func preamble(data []byte) string {
	head, _, _ := bytes.Cut(data, []byte("\ndiff --git "))
	if bytes.HasPrefix(data, []byte("diff --git ")) || bytes.HasPrefix(data, []byte("--- ")) {
		return ""
	}
	var keep []string
	for _, l := range strings.Split(string(head), "\n") {
		switch {
		case strings.HasPrefix(l, "From "), strings.HasPrefix(l, "From:"), strings.HasPrefix(l, "Date:"):
			continue
		case strings.HasPrefix(l, "Subject:"):
			l = strings.TrimSpace(strings.TrimPrefix(l, "Subject:"))
			if i := strings.Index(l, "] "); strings.HasPrefix(l, "[") && i > 0 {
				l = l[i+2:]
			}
		case l == "---":
			return strings.TrimSpace(strings.Join(keep, "\n"))
		}
		keep = append(keep, l)
	}
	s := strings.TrimSpace(strings.Join(keep, "\n"))
	if len(s) > 8<<10 {
		s = s[:8<<10]
	}
	return s
}

// checkContents refuses a diff review whose changed files cannot be read:
// every finding on them would be unanchored for want of the code.
func checkContents(files []review.File, req Request, haveSource bool) error {
	var missing []string
	reviewed := 0
	for _, f := range files {
		if f.SkipReason != "" {
			continue
		}
		reviewed++
		if f.Content == nil {
			missing = append(missing, f.Path)
		}
	}
	if len(missing) == 0 || req.DiffFile == "" {
		return nil
	}
	if !haveSource {
		return fmt.Errorf("the diff changes existing files (%s…): give --repo DIR, the checkout it applies to, so their contents can be read", missing[0])
	}
	if len(missing) == reviewed {
		return fmt.Errorf("none of the changed files (%s…) exist in %s: is --repo the checkout the diff applies to?", missing[0], req.Repo)
	}
	return nil
}

// Path limits. A name longer than Linux's NAME_MAX cannot come from a
// checkout nor be written to a snapshot; a path is bounded well below
// PATH_MAX by the primary key of review_files, whose btree entries hold at
// most about 2,700 bytes.
const (
	maxPathBytes = 2048
	maxNameBytes = 255
)

// checkPathLengths refuses a diff with a path longer than the limits.
func checkPathLengths(files []*diff.File) error {
	for _, f := range files {
		for _, p := range []string{f.OldPath, f.NewPath} {
			long := len(p) > maxPathBytes
			for _, name := range strings.Split(p, "/") {
				long = long || len(name) > maxNameBytes
			}
			if long {
				return fmt.Errorf("the path %q… (%d bytes) is longer than reviewfleet accepts (%d bytes, %d per name)",
					utf8Safe(p[:min(len(p), 40)]), len(p), maxPathBytes, maxNameBytes)
			}
		}
	}
	return nil
}

// dedupe keeps one entry per path. A type change (a symlink that became a
// file, or the reverse) comes out of git as a deletion and an addition of
// the same path: the addition is what the head holds. Any other repeat
// (a series of patches in one file) is an error.
func dedupe(files []*diff.File) ([]*diff.File, error) {
	at := map[string]int{}
	out := make([]*diff.File, 0, len(files))
	for _, f := range files {
		i, dup := at[f.Path()]
		if !dup {
			at[f.Path()] = len(out)
			out = append(out, f)
			continue
		}
		prev := out[i]
		switch {
		case prev.Status == diff.StatusDeleted && f.Status == diff.StatusAdded:
			out[i] = f
		case prev.Status == diff.StatusAdded && f.Status == diff.StatusDeleted:
		default:
			return nil, fmt.Errorf("the diff changes %s more than once (a series of patches?): review one patch at a time, or a --base..--head range", f.Path())
		}
	}
	return out, nil
}
