package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// hostRepo makes bare a bare repository holding src's branches and tags,
// the pull request's head as refs/pull/N/head (as GitHub keeps it) and its
// base, so that both commits can be fetched from the fake.
func hostRepo(ctx context.Context, src, bare string, n int, baseSHA, headSHA string) error {
	if out, err := exec.CommandContext(ctx, "git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		return fmt.Errorf("init the hosted repository: %v: %s", err, out)
	}
	refspecs := []string{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*",
		fmt.Sprintf("+%s:refs/pull/%d/head", headSHA, n), "+" + baseSHA + ":refs/fakegithub/base"}
	args := append([]string{"-C", src, "push", "-q", bare}, refspecs...)
	if out, err := exec.CommandContext(ctx, "git", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("copy %s into the hosted repository: %v: %s", src, err, strings.TrimSpace(string(out)))
	}
	return nil
}
