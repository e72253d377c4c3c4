//go:build unix

package localenv

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// account is the operating-system user the PostgreSQL programs run as.
// When the process is not root it is the current user and cred is nil; when
// it is root, initdb and postgres refuse to run, so an unprivileged account is
// used instead.
type account struct {
	name     string
	uid, gid int
	cred     *syscall.Credential
}

// serverAccount picks the account to run PostgreSQL as: the current user, or
// for root the "postgres" user if it exists, else "nobody".
func serverAccount() (account, error) {
	if os.Geteuid() != 0 {
		return account{name: currentUserName(), uid: os.Geteuid(), gid: os.Getegid()}, nil
	}
	var errs []error
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err1 != nil || err2 != nil {
			errs = append(errs, fmt.Errorf("user %s has non-numeric ids %q/%q", name, u.Uid, u.Gid))
			continue
		}
		return account{
			name: name, uid: uid, gid: gid,
			cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)},
		}, nil
	}
	return account{}, fmt.Errorf("running as root and neither a postgres nor a nobody user exists to run PostgreSQL as (initdb refuses to run as root): %w", errors.Join(errs...))
}

// prepare sets cmd to run as the account, in its own session so that the
// server it may start survives the terminal's signals and our exit.
func (a account) prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: a.cred}
}

// chownTree gives path and everything below it to the account, when running
// as root and path is not already owned by it.
func (a account) chownTree(path string) error {
	if a.cred == nil {
		return nil
	}
	if uid, gid, err := ownerOf(path); err == nil && uid == a.uid && gid == a.gid {
		return nil
	}
	return filepath.WalkDir(path, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, a.uid, a.gid); err != nil {
			return fmt.Errorf("give %s to user %s: %w", p, a.name, err)
		}
		return nil
	})
}

// closedAncestor returns the first ancestor of dir, outermost first, that
// the account may not enter ("" when it may enter them all). It changes
// nothing: permissions outside the data directory are the user's.
func (a account) closedAncestor(dir string) (string, error) {
	if a.cred == nil {
		return "", nil
	}
	var ancestors []string
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		ancestors = append(ancestors, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	for i := len(ancestors) - 1; i >= 0; i-- {
		fi, err := os.Stat(ancestors[i])
		if err != nil {
			return "", fmt.Errorf("check access to %s: %w", ancestors[i], err)
		}
		if !a.canTraverse(fi) {
			return ancestors[i], nil
		}
	}
	return "", nil
}

// canTraverse reports whether the account may enter the directory fi
// describes. Supplementary groups are not considered: the account runs with
// none.
func (a account) canTraverse(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	perm := fi.Mode().Perm()
	if !ok {
		return perm&0o001 != 0
	}
	switch {
	case int(st.Uid) == a.uid:
		return perm&0o100 != 0
	case int(st.Gid) == a.gid:
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}

func ownerOf(path string) (uid, gid int, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, fmt.Errorf("no owner information for %s", path)
	}
	return int(st.Uid), int(st.Gid), nil
}

// processAlive reports whether a process with the given pid exists.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// lockFile takes an exclusive advisory lock on path (created if missing),
// polling until it is free or ctx ends. The returned function releases it.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("wait for lock %s held by another process: %w", path, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func currentUserName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "uid " + strconv.Itoa(os.Geteuid())
}

// accountByID is the account of an existing user id, named if possible.
func accountByID(uid, gid int) account {
	name := "uid " + strconv.Itoa(uid)
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		name = u.Username
	}
	return account{name: name, uid: uid, gid: gid, cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
}

// switched reports whether the programs run as another user than ours.
func (a account) switched() bool { return a.cred != nil }
