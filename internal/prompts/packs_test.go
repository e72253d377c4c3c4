package prompts

import (
	"slices"
	"strings"
	"testing"
)

func TestDetectPacks(t *testing.T) {
	t.Parallel()
	all := AllPacks
	tests := []struct {
		name string
		path string
		diff string
		want []Pack
	}{
		{"pure css change has no signal", "web/site.css", hunkOf(
			`+.button { color: #333; }`,
			`+input[type="text"] { width: 100%; }`,
			`+@media (width <= 600px) { .nav { display: none; } }`), all},
		{"async js callbacks", "web/app.js", hunkOf(
			`+  items.forEach(async (item) => {`,
			`+    await notify(item);`,
			`+  });`), []Pack{PackConcurrency}},
		{"python sql f-string", "app/db.py", hunkOf(
			`+    query = f"SELECT * FROM users WHERE name = '{name}'"`,
			`+    cursor.execute(query)`), []Pack{PackAuthorization}},
		{"js sql template literal", "api/orders.ts", hunkOf(
			"+  const q = `SELECT id FROM orders WHERE owner = ${owner}`;"), []Pack{PackAuthorization}},
		{"go goroutine and channel", "worker/run.go", hunkOf(
			`+	results := make(chan string)`,
			`+	go func() {`,
			`+		results <- fetchName()`,
			`+	}()`), []Pack{PackConcurrency}},
		{"java synchronized", "src/Cache.java", hunkOf(
			`+    public synchronized void put(String k, String v) {`), []Pack{PackConcurrency}},
		{"python threading lock", "jobs/pool.py", hunkOf(
			`+lock = threading.Lock()`), []Pack{PackConcurrency}},
		{"removed lines count too", "worker/run.go", hunkOf(
			`-	mu.Lock()`), []Pack{PackConcurrency}},
		{"python mutable default argument", "app/tags.py", hunkOf(
			`+def add_tag(tag, tags=[]):`,
			`+    tags.append(tag)`,
			`+    return tags`), []Pack{PackLifecycle}},
		{"go open and deferred close", "store/file.go", hunkOf(
			`+	f, err := os.Open(path)`,
			`+	defer f.Close()`), []Pack{PackLifecycle, PackResourceLeak}},
		{"react effect with listener", "web/Chart.tsx", hunkOf(
			`+  useEffect(() => {`,
			`+    window.addEventListener("resize", onResize);`,
			`+  }, []);`), []Pack{PackLifecycle}},
		{"ruby before_action", "app/controllers/posts_controller.rb", hunkOf(
			`+  before_action :require_login, only: [:edit, :update]`), []Pack{PackAuthorization}},
		{"spring pre-authorize", "src/AdminController.java", hunkOf(
			`+    @PreAuthorize("hasRole('ADMIN')")`), []Pack{PackAuthorization}},
		{"outbound http in go", "client/get.go", hunkOf(
			`+	resp, err := http.Get(url)`), []Pack{PackAuthorization, PackResourceLeak}},
		{"go nil check", "user/find.go", hunkOf(
			`+	if user == nil {`,
			`+		return ErrNotFound`,
			`+	}`), []Pack{PackRobustness}},
		{"js optional chaining and coalescing", "web/user.js", hunkOf(
			`+const city = user?.address?.city ?? "unknown";`), []Pack{PackRobustness}},
		{"js or-default", "web/config.js", hunkOf(
			`+const port = config.port || 8080;`), []Pack{PackRobustness}},
		{"python dict get and except", "app/cfg.py", hunkOf(
			`+    try:`,
			`+        port = settings.get("port")`,
			`+    except KeyError:`,
			`+        pass`), []Pack{PackRobustness}},
		{"go error wrapping", "sched/run.go", hunkOf(
			`-		return fmt.Errorf("load configs: %v", err)`,
			`+		return fmt.Errorf("load configs: %w", err)`), []Pack{PackRobustness}},
		{"go mixed boolean operators", "rules/allow.go", hunkOf(
			`+	allowed := isOwner && active || isStaff`), []Pack{PackIntent}},
		{"python time arithmetic", "billing/trial.py", hunkOf(
			`+expires = datetime.utcnow() + timedelta(days=30)`), []Pack{PackIntent}},
		{"boundary comparison", "paging/page.go", hunkOf(
			`+	last := page >= maxPages`), []Pack{PackIntent}},
		{"negated condition", "flags/check.go", hunkOf(
			`-	if !user.Active {`,
			`+	if user.Active {`), []Pack{PackIntent}},
		{"renamed predicate", "flags/check.go", hunkOf(
			`-	if cfg.isEnabled {`,
			`+	if cfg.isDisabled {`), []Pack{PackIntent}},
		{"flipped operator", "flags/check.go", hunkOf(
			`-	if a < b {`,
			`+	if a > b {`), []Pack{PackIntent}},
		{"token as a word of an identifier", "auth/header.go", hunkOf(
			`+	accessToken := r.Header.Get("X-Auth")`), []Pack{PackAuthorization}},
		{"token inside a longer word is not a signal", "lex/scan.go", hunkOf(
			`+	tokenizer := newTokenizer(src)`,
			`+	if tokenizer == nil {`), []Pack{PackRobustness}},
		{"secretary is not a secret", "hr/staff.go", hunkOf(
			`+	secretary := staff.Lookup(id)`,
			`+	if secretary == nil {`), []Pack{PackRobustness}},
		{"go boolean or is not an or-default", "flags/or.go", hunkOf(
			`+	ok := a || b`), all},
		{"go comment-only change", "worker/run.go", hunkOf(
			`+	// TODO: lock the mutex and check the token before retrying`), nil},
		{"python comment-only change", "app/db.py", hunkOf(
			`-    # await the lock, then query`,
			`+    # await the lock, then run the query with the password`), nil},
		{"js comment-only change", "web/app.js", hunkOf(
			`+/**`,
			`+ * Fetches the token, then awaits the lock.`,
			`+ */`,
			`-// old note about async`), nil},
		{"go import-only change", "worker/run.go", hunkOf(
			` import (`,
			`+	"sync"`,
			`+	"time"`,
			` )`), nil},
		{"python import-only change", "jobs/pool.py", hunkOf(
			`-import os`,
			`+import threading`,
			`+from concurrent.futures import ThreadPoolExecutor`), nil},
		{"go.mod", "go.mod", hunkOf(
			`-require github.com/redis/go-redis/v9 v9.5.1`,
			`+require github.com/redis/go-redis/v9 v9.7.0`), nil},
		{"workflow yaml", ".github/workflows/ci.yml", hunkOf(
			`+      - run: go test -race ./...`,
			`+        env:`,
			`+          TOKEN: ${{ secrets.TOKEN }}`), []Pack{PackAuthorization}},
		{"workflow yaml without credentials", ".github/workflows/ci.yml", hunkOf(
			`+      - run: go test -race ./...`), nil},
		{"markdown", "docs/README.md", hunkOf(
			`+If the lock is held, await the token before you retry.`), nil},
		{"code beside an import is code", "worker/run.go", hunkOf(
			` import (`,
			`+	"os"`,
			` )`,
			`+var x = 1`), all},
		{"context lines are ignored", "worker/run.go", hunkOf(
			`	go func() {`,
			`+	x := 1`,
			`	}()`), all},
		{"several packs come back sorted", "api/handler.go", hunkOf(
			`+	if user == nil || !user.HasPermission("admin") {`,
			`+		go audit(ctx, user)`), []Pack{PackAuthorization, PackConcurrency, PackRobustness}},
		{"diff without hunk headers", "web/app.js", "+await sendAll(items)\n", []Pack{PackConcurrency}},
		{"empty diff", "main.go", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := DetectPacks(tt.path, tt.diff)
			if !slices.Equal(got, tt.want) {
				t.Errorf("DetectPacks = %v, want %v\nsignals: %+v", got, tt.want, DetectSignals(tt.path, tt.diff))
			}
		})
	}
}

// A placeholder-bound query is not SQL built from strings, and a lexer's
// "nextToken" is an accepted false alarm: the detector works on identifier
// words, and "token" as a whole word costs one extra pack at worst.
func TestDetectSignalsDecisions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		path   string
		diff   string
		signal string
		want   bool
	}{
		{"parameterised query", "app/db.py", hunkOf(`+    cursor.execute("SELECT * FROM users WHERE id = %s", (user_id,))`), "sql built from strings", false},
		{"percent formatting", "app/db.py", hunkOf(`+    cursor.execute("SELECT * FROM users WHERE id = %s" % user_id)`), "sql built from strings", true},
		{"go concatenation", "store/q.go", hunkOf(`+	q := "DELETE FROM sessions WHERE user_id = " + id`), "sql built from strings", true},
		{"go positional parameter", "store/q.go", hunkOf(`+	_, err := db.Exec(ctx, "DELETE FROM sessions WHERE user_id = $1", id)`), "sql built from strings", false},
		{"lexer nextToken is accepted", "lex/scan.go", hunkOf(`+	tok := nextToken(src)`), "credentials", true},
		{"tokenize is not a token", "lex/scan.go", hunkOf(`+	parts := Tokenize(src)`), "credentials", false},
		{"api key in any casing", "cfg/env.go", hunkOf(`+	k := os.Getenv("SERVICE_API_KEY")`), "credentials", true},
		{"js private field is not a comment", "web/counter.js", hunkOf(`+  #count = await load();`), "async and await", true},
		{"python comment is skipped", "app/x.py", hunkOf(`+    # await the lock here`), "async and await", false},
		{"go map type is not index access", "store/m.go", hunkOf(`+	seen := map[string]bool{}`), "index access", false},
		{"python typing is not index access", "app/t.py", hunkOf(`+def f(x: Optional[str]) -> dict[str, int]:`), "index access", false},
		{"slice of a value is index access", "app/t.py", hunkOf(`+    head = parts[1:]`), "index access", true},
		{"mutable default is python only", "web/a.js", hunkOf(`+function add(tag, tags = []) {`), "mutable default argument", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hits := DetectSignals(tt.path, tt.diff)
			got := slices.ContainsFunc(hits, func(h Hit) bool { return h.Signal == tt.signal })
			if got != tt.want {
				t.Errorf("signal %q fired = %v, want %v; hits %+v", tt.signal, got, tt.want, hits)
			}
		})
	}
}

func TestDetectSignalsReportsLine(t *testing.T) {
	t.Parallel()
	hits := DetectSignals("w.go", hunkOf(` x := 0`, `+	go run(ctx)`))
	if len(hits) != 1 || hits[0].Signal != "go statement" || hits[0].Line != "	go run(ctx)" {
		t.Fatalf("hits = %+v, want one go statement hit on the added line", hits)
	}
}

func TestSignalTableIsWellFormed(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, s := range signals {
		if s.name == "" || s.match == nil {
			t.Errorf("signal %+v lacks a name or matcher", s)
		}
		if seen[s.name] {
			t.Errorf("duplicate signal name %q", s.name)
		}
		seen[s.name] = true
		if !slices.Contains(AllPacks, s.pack) {
			t.Errorf("signal %q selects unknown pack %q", s.name, s.pack)
		}
	}
	for _, p := range AllPacks {
		if !slices.ContainsFunc(signals, func(s signal) bool { return s.pack == p }) {
			t.Errorf("pack %q has no signal", p)
		}
	}
	if !slices.IsSorted(AllPacks) {
		t.Errorf("AllPacks %v is not sorted", AllPacks)
	}
}

func TestSplitIdent(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"apiKey":          "api key",
		"APIKey":          "api key",
		"API_KEY":         "api key",
		"is_admin":        "is admin",
		"HTTPServer2Addr": "http server2 addr",
		"tokenizer":       "tokenizer",
		"$scope":          "scope",
		"x":               "x",
	}
	for in, want := range tests {
		if got := strings.Join(splitIdent(in), " "); got != want {
			t.Errorf("splitIdent(%q) = %q, want %q", in, got, want)
		}
	}
}

// Progressive context must not lose the pack a change needs: a change
// touching authentication keeps the authorization pack even when other
// signals fire.
func TestAuthChangesKeepTheAuthorizationPack(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, path, diff string }{
		{"removed auth middleware", "internal/api/router.go", hunkOf(
			`-	r.Use(requireAuth)`,
			`+	for i := 0; i < len(routes); i++ {`)},
		{"boundary change in an auth file", "internal/auth/session.go", hunkOf(
			`+	if len(parts) > 2 {`)},
		{"login handler", "web/handlers.py", hunkOf(
			`+def login_view(request):`,
			`+    user = User.objects.get(name=request.POST["name"])`)},
	}
	for _, tt := range tests {
		if got := DetectPacks(tt.path, tt.diff); !slices.Contains(got, PackAuthorization) {
			t.Errorf("%s: packs %v lack authorization", tt.name, got)
		}
	}
}

// Memory safety (C/C++, unsafe Rust, cgo) and resource leaks are risk
// types with packs of their own, which progressive context selects from
// the change.
func TestMemorySafetyAndResourceLeakPacks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, diff string
		want             Pack
	}{
		{"c buffer copy", "src/buf.c", hunkOf(`+    memcpy(dst, src, len);`), PackMemorySafety},
		{"c++ delete", "src/node.cpp", hunkOf(`+    delete node;`), PackMemorySafety},
		{"unsafe rust", "src/lib.rs", hunkOf(`+    let s = std::slice::from_raw_parts(p, n);`), PackMemorySafety},
		{"cgo", "pkg/c.go", hunkOf(`+	C.free(unsafe.Pointer(cs))`), PackMemorySafety},
		{"response body", "pkg/fetch.go", hunkOf(`+	resp, err := http.Get(u)`), PackResourceLeak},
		{"cancel func", "pkg/run.go", hunkOf(`+	ctx, _ = context.WithCancel(ctx)`), PackResourceLeak},
		{"python file", "tool/read.py", hunkOf(`+    f = open(path)`), PackResourceLeak},
	}
	for _, tt := range tests {
		if got := DetectPacks(tt.path, tt.diff); !slices.Contains(got, tt.want) {
			t.Errorf("%s: packs %v lack %s", tt.name, got, tt.want)
		}
	}
}
