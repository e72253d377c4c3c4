package localenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// pgBinaries are the PostgreSQL programs a local cluster needs.
var pgBinaries = []string{"initdb", "pg_ctl", "postgres"}

// wellKnownBinGlobs are the places PostgreSQL installs its server programs
// when they are not on PATH: Debian/Ubuntu, source builds, Homebrew, MacPorts,
// Postgres.app and the PGDG RPM layout.
var wellKnownBinGlobs = []string{
	"/usr/lib/postgresql/*/bin",
	"/usr/local/pgsql/bin",
	"/usr/pgsql-*/bin",
	"/opt/homebrew/opt/postgresql@*/bin",
	"/opt/homebrew/bin",
	"/usr/local/opt/postgresql@*/bin",
	"/usr/local/bin",
	"/opt/local/lib/postgresql*/bin",
	"/Applications/Postgres.app/Contents/Versions/*/bin",
}

// ErrNoPostgresBinaries is returned (wrapped) when initdb, pg_ctl and postgres
// cannot be found together in one directory.
var ErrNoPostgresBinaries = errors.New("PostgreSQL server binaries not found")

// binCandidates lists the directories that may hold the PostgreSQL binaries,
// in search order: binDir alone when it is set; otherwise the directories of
// pathEnv, then globs, each glob's matches newest version first.
func binCandidates(binDir, pathEnv string, globs []string) []string {
	if binDir != "" {
		return []string{binDir}
	}
	var dirs []string
	seen := map[string]bool{}
	add := func(d string) {
		if d == "" || seen[d] {
			return
		}
		seen[d] = true
		dirs = append(dirs, d)
	}
	for _, d := range filepath.SplitList(pathEnv) {
		add(d)
	}
	for _, g := range globs {
		matches, err := filepath.Glob(g)
		if err != nil {
			continue // a malformed pattern matches nothing
		}
		sort.SliceStable(matches, func(i, j int) bool {
			return versionKey(matches[i]) > versionKey(matches[j])
		})
		for _, m := range matches {
			add(m)
		}
	}
	return dirs
}

var versionRe = regexp.MustCompile(`(\d+)(?:\.(\d+))?`)

// versionKey extracts a sortable PostgreSQL version from a directory path
// such as /usr/lib/postgresql/16/bin or /usr/pgsql-15/bin (0 when none).
func versionKey(dir string) int {
	best := 0
	for _, m := range versionRe.FindAllStringSubmatch(dir, -1) {
		major, err := strconv.Atoi(m[1])
		if err != nil || major > 1000 {
			continue
		}
		minor := 0
		if m[2] != "" {
			minor, _ = strconv.Atoi(m[2])
		}
		if v := major*1000 + minor; v > best {
			best = v
		}
	}
	return best
}

// hasBinaries reports whether dir holds every program in pgBinaries as an
// executable regular file (symlinks followed).
func hasBinaries(dir string) bool {
	for _, name := range pgBinaries {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}

// findBinDir returns the first candidate directory holding all of
// pgBinaries. When wantMajor is set (an existing cluster's PG_VERSION, such
// as "16"), only a directory whose postgres has that major version will do,
// since a cluster can only be served by its own major version.
func findBinDir(candidates []string, wantMajor string, majorOf func(dir string) (string, error)) (string, error) {
	var found []string
	for _, d := range candidates {
		if hasBinaries(d) {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		return "", noBinariesError(candidates)
	}
	if wantMajor == "" {
		return found[0], nil
	}
	var versions []string
	for _, d := range found {
		major, err := majorOf(d)
		if err != nil {
			versions = append(versions, fmt.Sprintf("%s (%v)", d, err))
			continue
		}
		if major == wantMajor {
			return d, nil
		}
		versions = append(versions, fmt.Sprintf("%s (version %s)", d, major))
	}
	return "", fmt.Errorf("%w: the data directory holds a PostgreSQL %s cluster but only other versions were found: %s; install PostgreSQL %s or use another data directory",
		ErrNoPostgresBinaries, wantMajor, strings.Join(versions, ", "), wantMajor)
}

func noBinariesError(searched []string) error {
	where := "nowhere (empty search list)"
	if len(searched) > 0 {
		where = strings.Join(searched, ", ")
	}
	return fmt.Errorf("%w: need %s in one directory; searched %s. "+
		"Install the PostgreSQL server (Debian/Ubuntu: apt-get install postgresql; Fedora: dnf install postgresql-server; macOS: brew install postgresql), "+
		"or set DATABASE_URL to use an existing server instead of a local cluster",
		ErrNoPostgresBinaries, strings.Join(pgBinaries, ", "), where)
}

var serverVersionRe = regexp.MustCompile(`\(PostgreSQL\) (\d+)(?:\.(\d+))?`)

// parseMajor extracts the major version from `postgres --version` output,
// in the form PG_VERSION uses: "16" from 16.2, "9.6" from 9.6.24.
func parseMajor(versionOutput string) (string, error) {
	m := serverVersionRe.FindStringSubmatch(versionOutput)
	if m == nil {
		return "", fmt.Errorf("unrecognised version output %q", strings.TrimSpace(versionOutput))
	}
	if n, _ := strconv.Atoi(m[1]); n < 10 && m[2] != "" {
		return m[1] + "." + m[2], nil
	}
	return m[1], nil
}
