package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// sessionGo is the cited file of the sample repository.
const sessionGo = `package auth

// Store keeps sessions by id.
type Store struct {
	byID map[string]*Session
}

// Lookup returns the session with the given id.
func (s *Store) Lookup(id string) *Session {
	sess := s.byID[id]
	return sess
}

// Touch extends a session.
func (s *Store) Touch(id string) {
	sess := s.Lookup(id)
	sess.Expires = sess.Expires.Add(ttl)
}
`

// writeFiles creates files (slash paths relative to root) with contents.
func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sampleRepo creates a small repository snapshot and returns its root.
func sampleRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"internal/auth/session.go":   sessionGo,
		"internal/auth/handler.go":   "package auth\n\nfunc handle(s *Store, id string) {\n\ts.Touch(id)\n}\n",
		"README.md":                  "# sample\n",
		"node_modules/lib/index.js":  "function Lookup(id) { return byID[id] }\n",
		"vendor/x/y.go":              "package y\n\nfunc Lookup() {}\n",
		"internal/auth/session.json": `{"ttl": 30}`,
	})
	return root
}

// sampleTask is a finding about the nil session in Touch.
func sampleTask(root string) Task {
	return Task{
		FindingID: 7, RiskType: review.Robustness, File: "internal/auth/session.go",
		LineStart: 15, LineEnd: 18, Description: "Touch dereferences a session that Lookup may not find",
		Confidence: 0.8, Context: "+\tsess.Expires = sess.Expires.Add(ttl)", Root: root,
	}
}

// fastConfig keeps tool budgets short for tests.
func fastConfig() Config {
	return Config{Model: "test-model", ReadTimeout: time.Second, ScanTimeout: time.Second, MaxToolTimeout: 2 * time.Second}
}
