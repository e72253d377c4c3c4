package gitsrc

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The environment git runs with keeps no variable that would point it at
// another repository or configuration, keeps those that reach remotes, and
// replaces HOME.
func TestGitEnv(t *testing.T) {
	env := gitEnv([]string{
		"PATH=/usr/bin", "HOME=/root", "XDG_CONFIG_HOME=/root/.config", "GIT_DIR=/elsewhere/.git",
		"GIT_CONFIG_PARAMETERS='core.fsmonitor'='touch x'", "GIT_CONFIG_COUNT=1", "GIT_EXTERNAL_DIFF=touch",
		"GIT_ASKPASS=/bin/ask", "SSH_ASKPASS=/bin/ask", "GIT_TRACE_REDACT=0",
		"GIT_SSH_COMMAND=ssh -i key", "GIT_SSL_CAINFO=/ca.pem", "GIT_TRACE=1", "http_proxy=http://proxy:3128",
	})
	for _, gone := range []string{"GIT_DIR=", "GIT_CONFIG_PARAMETERS=", "GIT_CONFIG_COUNT=", "GIT_EXTERNAL_DIFF=", "GIT_ASKPASS=", "SSH_ASKPASS=", "GIT_TRACE_REDACT=", "HOME=/root", "XDG_CONFIG_HOME=/root"} {
		if i := slices.IndexFunc(env, func(kv string) bool { return strings.HasPrefix(kv, gone) }); i >= 0 {
			t.Errorf("%s is passed to git", env[i])
		}
	}
	for _, kept := range []string{"PATH=/usr/bin", "GIT_SSH_COMMAND=ssh -i key", "GIT_SSL_CAINFO=/ca.pem", "GIT_TRACE=1", "http_proxy=http://proxy:3128",
		"HOME=" + os.DevNull, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_TERMINAL_PROMPT=0"} {
		if !slices.Contains(env, kept) {
			t.Errorf("%s is missing from git's environment %q", kept, env)
		}
	}
}
