package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"sync"

	"github.com/zricethezav/gitleaks/v8/config"
)

// codeRulesRevision counts changes to what the code in assign.go and
// block.go finds. Bump it with any such change: RulesVersion cannot see
// code, and a cache of redacted text must not outlive the rules that made it.
const codeRulesRevision = 2

var (
	versionOnce sync.Once
	version     string
)

// RulesVersion identifies the rules redaction applies: the project's line
// patterns, gitleaks' default configuration and the revision of the code
// rules. Anything stored redacted across runs (the worker's cache of
// redacted head trees) is keyed by it, so a secret an older rule set missed
// is never served again once a newer one finds it.
func RulesVersion() string {
	versionOnce.Do(func() {
		h := sha256.New()
		for _, r := range Rules {
			h.Write([]byte(r.Kind + "\x00" + r.Pattern.String() + "\x00" + strconv.Itoa(r.Group) + "\n"))
		}
		h.Write([]byte(config.DefaultConfig))
		h.Write([]byte("code-rules:" + strconv.Itoa(codeRulesRevision)))
		version = hex.EncodeToString(h.Sum(nil))[:12]
	})
	return version
}
