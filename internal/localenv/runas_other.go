//go:build !unix

package localenv

import (
	"context"
	"errors"
	"os/exec"
)

var errUnsupported = errors.New("a local PostgreSQL cluster is only supported on Unix-like systems; set DATABASE_URL to use an existing server")

type account struct{ name string }

func serverAccount() (account, error)                   { return account{}, errUnsupported }
func (a account) prepare(*exec.Cmd)                     {}
func (a account) chownTree(string) error                { return errUnsupported }
func (a account) closedAncestor(string) (string, error) { return "", errUnsupported }
func processAlive(int) bool                             { return false }
func lockFile(context.Context, string) (func(), error)  { return nil, errUnsupported }

func accountByID(int, int) account             { return account{} }
func ownerOf(string) (uid, gid int, err error) { return 0, 0, errUnsupported }

func (a account) switched() bool { return false }
