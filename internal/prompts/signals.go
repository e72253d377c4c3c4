package prompts

import (
	"regexp"
	"slices"
	"strings"
)

// signal is one named entry of the detector table: when it matches a
// changed line (or, for the few cross-line signals, a pair of lines) its
// pack is selected. To extend the detector, add a row to signals.
type signal struct {
	name  string
	pack  Pack
	langs []string // languages it applies to (see languageByExt); none: all
	match func(c *change) (line string, ok bool)
}

// appliesTo reports whether the signal is used for files in lang. Files of
// unknown language get every signal.
func (s signal) appliesTo(lang string) bool {
	return len(s.langs) == 0 || lang == "" || slices.Contains(s.langs, lang)
}

var identRe = regexp.MustCompile(`[A-Za-z_$][A-Za-z0-9_$]*`)

// anyLine matches when expr matches a changed line.
func anyLine(expr string) func(*change) (string, bool) {
	p := compileLine(expr)
	return func(c *change) (string, bool) {
		for _, l := range c.lines {
			if p.match(l) {
				return l.text, true
			}
		}
		return "", false
	}
}

// anyWords matches when an identifier on a changed line contains one of the
// phrases as consecutive words: "api key" matches apiKey, API_KEY and
// readApiKey but not apikeys; "token" matches csrfToken but not tokenizer.
func anyWords(phrases ...string) func(*change) (string, bool) {
	seqs := make([][]string, len(phrases))
	for i, p := range phrases {
		seqs[i] = strings.Fields(p)
	}
	return func(c *change) (string, bool) {
		for _, l := range c.lines {
			for _, id := range l.idents {
				for _, seq := range seqs {
					if containsRun(id, seq) {
						return l.text, true
					}
				}
			}
		}
		return "", false
	}
}

// containsRun reports whether seq occurs in words as a contiguous run.
func containsRun(words, seq []string) bool {
	for i := 0; i+len(seq) <= len(words); i++ {
		if slices.Equal(words[i:i+len(seq)], seq) {
			return true
		}
	}
	return false
}

// anyLineFunc matches when f accepts a changed line.
func anyLineFunc(f func(codeLine) bool) func(*change) (string, bool) {
	return func(c *change) (string, bool) {
		for _, l := range c.lines {
			if f(l) {
				return l.text, true
			}
		}
		return "", false
	}
}

// signals is the detector table. Rows are grouped by pack; within a pack,
// language-neutral rows come first.
var signals = []signal{
	// Concurrency: timing correctness.
	{name: "go statement", pack: PackConcurrency, langs: []string{"go"},
		match: anyLine(`^\s*go\s+(func\b|[\w.]+\()`)},
	{name: "go channel", pack: PackConcurrency, langs: []string{"go"},
		match: anyLine(`\bchan\b|<-`)},
	{name: "go select", pack: PackConcurrency, langs: []string{"go"},
		match: anyLine(`^\s*select\s*\{`)},
	{name: "go sync packages", pack: PackConcurrency, langs: []string{"go"},
		match: anyLine(`\b(sync|atomic|errgroup|semaphore)\.\w`)},
	{name: "concurrency vocabulary", pack: PackConcurrency,
		match: anyWords("goroutine", "goroutines", "mutex", "rw mutex", "lock", "unlock", "r lock", "r unlock",
			"try lock", "wait group", "semaphore", "synchronized", "volatile", "atomic", "concurrent",
			"thread", "threads", "threading", "executor", "executors", "executor service",
			"completable future", "count down latch", "asyncio", "multiprocessing")},
	{name: "async and await", pack: PackConcurrency,
		match: anyLine(`\basync\b|\bawait\b|\bPromise\b|\.then\(|\bsuspend\s+fun\b|\b(launch|async|runBlocking)\s*\{`)},
	{name: "async callback in iteration", pack: PackConcurrency, langs: []string{"js"},
		match: anyLine(`\.(forEach|map|filter|reduce|some|every)\(\s*async\b`)},
	{name: "thread start", pack: PackConcurrency,
		match: anyLine(`\bnew Thread\b|\bThread\.(new|start)\b|\bthread::spawn\b|\bconcurrent\.futures\b|@Async\b|\bConcurrent::`)},

	// Robustness: boundary conditions.
	{name: "if with parenthesis", pack: PackRobustness,
		match: anyLine(`\bif\s*\(`)},
	{name: "absent value", pack: PackRobustness,
		match: anyLine(`\b(nil|null|None|undefined|NULL)\b|\.nil\?|\bOptional\b`)},
	{name: "optional chaining or coalescing", pack: PackRobustness,
		match: anyLine(`\?\.|\?\?|&\.\w|\?:`)},
	{name: "or default", pack: PackRobustness, langs: []string{"js", "ruby", "php"},
		match: anyLine(`\|\|`)},
	{name: "map get", pack: PackRobustness,
		match: anyLine(`\.get\(|\.fetch\(|\.dig\(|\bgetOrDefault\(|\bgetattr\(`)},
	{name: "error handling", pack: PackRobustness,
		match: anyLine(`\b(try|catch|except|rescue|finally|throw|throws|raise|panic|recover)\b`)},
	{name: "go error values", pack: PackRobustness, langs: []string{"go"},
		match: anyLine(`\bfmt\.Errorf\(|\berrors\.(New|Is|As|Join|Unwrap)\(`)},
	{name: "go ignored error", pack: PackRobustness, langs: []string{"go"},
		match: anyLine(`,\s*_\s*:?=|^\s*_\s*=\s*\w`)},
	{name: "index access", pack: PackRobustness,
		match: anyLineFunc(hasIndexAccess)},
	{name: "length", pack: PackRobustness,
		match: anyLine(`\blen\(|\.length\b|\.size\(\)|\.count\(\)|\.Count\b`)},
	{name: "parse or convert", pack: PackRobustness,
		match: anyLine(`(?i)\bparse\w*\(|\bstrconv\.|\bAtoi\(|Unmarshal\(|\bjson\.loads?\(|\b(u?int(8|16|32|64)?|float(32|64)?|Number|Integer|Float|Decimal)\(|` +
			`\.to_[ifr]\b|\.(toInt|toLong|toDouble|intValue|longValue)\(|\bvalueOf\(`)},

	// Authorization: data exposure.
	{name: "sql built from strings", pack: PackAuthorization,
		match: anyLineFunc(isInterpolatedSQL)},
	{name: "command or code execution", pack: PackAuthorization,
		match: anyLine(`\b(exec|eval|system|popen|execSync|execFile|spawn)\s*\(|\bos\.system\b|\bsubprocess\.|\bchild_process\b|` +
			`\bexec\.Command\b|Runtime\.getRuntime\(\)\.exec|\bshell\s*=\s*True\b|\bnew Function\(`)},
	{name: "unescaped output", pack: PackAuthorization,
		match: anyLine(`\binnerHTML\b|\bdangerouslySetInnerHTML\b|\bhtml_safe\b|\bmark_safe\(|\bv-html\b|\btemplate\.HTML\(|\|\s*safe\b|\braw\(`)},
	{name: "outbound http", pack: PackAuthorization,
		match: anyLine(`\bfetch\(|\baxios\b|\bhttp\.(Get|Post|PostForm|Head|NewRequest\w*)\(|\brequests\.(get|post|put|patch|delete|request|Session)\b|` +
			`\burllib\b|\bHttpClient\b|\bRestTemplate\b|\bWebClient\b|\bNet::HTTP\b|\bFaraday\b|\bHTTParty\b|\bXMLHttpRequest\b|InsecureSkipVerify|verify\s*=\s*False`)},
	{name: "credentials", pack: PackAuthorization,
		match: anyWords("password", "passwords", "passwd", "passphrase", "secret", "secrets", "token", "tokens",
			"credential", "credentials", "api key", "apikey", "private key", "access key", "jwt", "bearer",
			"oauth", "csrf", "xsrf", "cookie", "cookies", "bcrypt", "md5", "sha1")},
	{name: "permission vocabulary", pack: PackAuthorization,
		match: anyWords("admin", "admins", "superuser", "is admin", "permission", "permissions", "role", "roles",
			"authorize", "authorized", "unauthorized", "authorization", "authz", "authenticate", "authenticated",
			"rbac", "acl", "forbidden", "current user", "tenant", "tenant id",
			// Auth, login and signing code is often named in these
			// words only: without them such a change lost the
			// authorization pack.
			"auth", "authn", "login", "logout", "signin", "sign in", "sso", "saml", "ldap", "hmac", "privilege", "privileges")},
	{name: "access-control annotations", pack: PackAuthorization,
		match: anyLine(`@(PreAuthorize|PostAuthorize|Secured|RolesAllowed|PermitAll|DenyAll|login_required|permission_required)\b|` +
			`\b(skip_)?before_action\b|\bpermission_classes\b|\bauthorize!|\bcan\?|\[Authorize|\[AllowAnonymous|\.permit\(`)},

	// Lifecycle: state consistency.
	{name: "state-changing call", pack: PackLifecycle,
		match: anyLine(`(?i)\b(update|delete|destroy|upsert)\w*\s*\(|\.save\(`)},
	{name: "timers and subscriptions", pack: PackLifecycle,
		match: anyLine(`\b(setInterval|clearInterval|setTimeout|clearTimeout|addEventListener|removeEventListener|` +
			`subscribe|unsubscribe|MutationObserver|ResizeObserver|IntersectionObserver)\b|\btime\.(NewTicker|NewTimer|AfterFunc|Tick)\(|\bsignal\.Notify\(`)},
	{name: "react effect", pack: PackLifecycle, langs: []string{"js"},
		match: anyLine(`\buse(Layout)?Effect\(`)},
	{name: "deferred cleanup", pack: PackLifecycle, langs: []string{"go", "swift"},
		match: anyLine(`^\s*defer\b`)},
	{name: "open and close", pack: PackLifecycle,
		match: anyLine(`\.(Close|close|Dispose|dispose|release|Release)\(\)|\bopen\(|\bos\.(Open|OpenFile|Create)\(|\bfopen\(|` +
			`\bnew (FileInputStream|FileOutputStream|FileReader|FileWriter|Socket|RandomAccessFile)\b|\bwith\s+open\b|\busing\s*\(`)},
	{name: "mutable default argument", pack: PackLifecycle, langs: []string{"python"},
		match: anyLine(`\bdef\s+\w+\s*\(.*=\s*(\[|\{|list\(\)|dict\(\)|set\(\)|defaultdict\()`)},
	{name: "state and cache fields", pack: PackLifecycle,
		match: anyLine(`\b(this|self)\.(_?state|_?cache\w*)\b|@(state|cache)\b|\bsetState\(|^\s*global\s+\w|` +
			`\bstatic\s+(final\s+)?(Map|List|Set|HashMap|ArrayList|HashSet)\b|^var\s+\w+\s*=\s*(map\[|make\()`)},
	{name: "cache vocabulary", pack: PackLifecycle,
		match: anyWords("cache", "caches", "cached", "memo", "memoize", "memoized", "singleton")},
	{name: "init and teardown", pack: PackLifecycle,
		match: anyLine(`\bfunc init\(\)|__init__|__del__|__enter__|__exit__|\bconstructor\(|\bcomponent(DidMount|WillUnmount)\b|` +
			`\bngOn(Init|Destroy)\b|\bon(Create|Destroy|Start|Stop)\(|\b(setUp|tearDown)\b|@(PostConstruct|PreDestroy)\b|` +
			`\b(initialize|finalize|teardown|shutdown|Shutdown|dispose|cleanup|Cleanup)\b`)},

	// Memory safety: C/C++, unsafe Rust, cgo and Go's unsafe.
	{name: "c memory calls", pack: PackMemorySafety, langs: []string{"c"},
		match: anyLine(`\b(malloc|calloc|realloc|free|memcpy|memmove|memset|strcpy|strncpy|strcat|strncat|sprintf|gets|alloca)\s*\(|` +
			`\bnew\s+\w+\s*\[|\bdelete\s*(\[\])?\s*\w|\b(reinterpret_cast|const_cast)\b|\[\s*\w+\s*\]\s*=`)},
	{name: "unsafe rust", pack: PackMemorySafety, langs: []string{"rust"},
		match: anyLine(`\bunsafe\b|\*(const|mut)\s+\w|\bptr::|\btransmute\b|\bfrom_raw(_parts)?\b|\.as_(mut_)?ptr\(|\bMaybeUninit\b|\bget_unchecked(_mut)?\(`)},
	{name: "cgo and go unsafe", pack: PackMemorySafety, langs: []string{"go"},
		match: anyLine(`^\s*import\s+"C"|\bC\.[A-Za-z_]\w*|\bunsafe\.(Pointer|Slice|String|StringData|SliceData|Add)\b|\breflect\.(SliceHeader|StringHeader)\b`)},

	// Resource leaks: acquired, never released.
	{name: "acquired resource", pack: PackResourceLeak,
		match: anyLine(`\bos\.(Open|OpenFile|Create|CreateTemp|MkdirTemp)\(|\bnet\.(Dial|Listen)\w*\(|\bsql\.Open\(|\.(Query|QueryContext)\(|` +
			`\bhttp\.(Get|Post|Head)\(|\.Do\(req|\bfopen\(|\bsocket\(|\bopen\(|\bcreateReadStream\(|\bcreateWriteStream\(|` +
			`\bnew (FileInputStream|FileOutputStream|FileReader|FileWriter|Socket|RandomAccessFile|BufferedReader)\b|\bgetConnection\(`)},
	{name: "tickers and cancellable contexts", pack: PackResourceLeak, langs: []string{"go"},
		match: anyLine(`\btime\.(NewTicker|Tick)\(|\bcontext\.With(Cancel|Timeout|Deadline)\w*\(`)},

	// Intent: semantic consistency with the change's purpose.
	{name: "mixed boolean operators", pack: PackIntent,
		match: anyLineFunc(mixesBooleanOperators)},
	{name: "time arithmetic", pack: PackIntent,
		match: anyLine(`\btime\.(Now|Since|Until|Date|Unix|UnixMilli|Parse|ParseInLocation|LoadLocation)\b|\.AddDate\(|` +
			`\bDate\.(now|parse|UTC)\(|\bnew Date\(|\.getTime\(\)|\bmoment\(|\bdayjs\(|\bdatetime\b|\btimedelta\b|` +
			`\btime\.(time|monotonic)\(\)|\butcnow\b|\bzoneinfo\b|\bpytz\b|\bdate\.today\(|` +
			`\b(LocalDate|LocalDateTime|ZonedDateTime|OffsetDateTime|Instant|ChronoUnit|TimeUnit)\b|System\.currentTimeMillis|` +
			`\bTime\.(now|current|zone|at)\b|\.(days?|hours?|minutes?|seconds?)\.(ago|from_now)\b`)},
	{name: "boundary comparison", pack: PackIntent,
		match: anyLineFunc(isBoundaryComparison)},
	{name: "flipped or renamed condition", pack: PackIntent,
		match: flippedCondition},
}

// indexRe finds x[expr], f()[expr] and a[i][j]; hasIndexAccess filters out
// the type expressions that look the same.
var indexRe = regexp.MustCompile(`([A-Za-z_][\w.]*|\)|\])\[([^\[\]]+)\]`)

// typeSubscripts are lower-case names whose subscript is a type, not an
// index: Go map types and Python generic aliases.
var typeSubscripts = map[string]bool{
	"map": true, "list": true, "dict": true, "tuple": true, "set": true, "frozenset": true, "type": true,
}

// hasIndexAccess reports whether a line indexes or slices a value.
// Subscripts of capitalised names (generic types, Python typing) and of type
// keywords do not count.
func hasIndexAccess(l codeLine) bool {
	for _, m := range indexRe.FindAllStringSubmatch(l.text, -1) {
		base := m[1]
		if i := strings.LastIndexByte(base, '.'); i >= 0 {
			base = base[i+1:]
		}
		if base == ")" || base == "]" {
			return true
		}
		if base == "" || isUpper(rune(base[0])) || typeSubscripts[base] {
			continue
		}
		return true
	}
	return false
}

var (
	sqlRe = regexp.MustCompile(`(?i)\b(select\b.+\bfrom|insert\s+into|update\s+[\w."]+\s+set|delete\s+from|where\s+[\w."]+\s*(=|<|>|like\b|in\b))`)
	// interpolationRe finds a value spliced into a string: concatenation,
	// f-strings, template literals, Ruby, Kotlin and PHP interpolation,
	// printf and format calls, Python's % operator.
	interpolationRe = regexp.MustCompile("\\bf[\"']|\\$\\{|#\\{|\\$[A-Za-z_]|[\"'`]\\s*\\+|\\+\\s*[\"'`]|\\.format\\(|\\bSprintf\\(|" +
		"[\"']\\s*%\\s*[\\w(\\[]|\\{[A-Za-z_][\\w.]*\\}")
)

// isInterpolatedSQL reports whether a line holds SQL and splices a value
// into a string. Placeholders bound as parameters ($1, ?, %s with an
// argument tuple) do not count.
func isInterpolatedSQL(l codeLine) bool {
	return sqlRe.MatchString(l.text) && interpolationRe.MatchString(l.text)
}

var (
	andWordRe = regexp.MustCompile(`\band\b`)
	orWordRe  = regexp.MustCompile(`\bor\b`)
)

// mixesBooleanOperators reports whether a line combines "and" and "or" in
// one expression, where precedence decides the grouping. Word operators
// count only on lines without string literals, where they are not prose.
func mixesBooleanOperators(l codeLine) bool {
	if strings.Contains(l.text, "&&") && strings.Contains(l.text, "||") {
		return true
	}
	return andWordRe.MatchString(l.text) && orWordRe.MatchString(l.text) && !strings.ContainsAny(l.text, `"'`)
}

var (
	inclusiveCompareRe = regexp.MustCompile(`(^|[^<>=])(<=|>=)([^>=]|$)`)
	numberRe           = regexp.MustCompile(`(^|[^\w.])\d`)
)

// boundaryWords are identifier words that name a limit or a position.
var boundaryWords = []string{"len", "length", "size", "count", "max", "min", "limit", "cap", "capacity",
	"threshold", "bound", "total", "start", "end", "begin", "deadline", "timeout", "retries", "attempts",
	"offset", "index", "idx", "first", "last", "n"}

// isBoundaryComparison reports whether a line compares with <= or >=
// against something that looks like a boundary: a number literal or an
// identifier naming a length, a limit or a position.
func isBoundaryComparison(l codeLine) bool {
	if !inclusiveCompareRe.MatchString(l.text) {
		return false
	}
	if numberRe.MatchString(l.text) {
		return true
	}
	for _, id := range l.idents {
		for _, w := range id {
			if slices.Contains(boundaryWords, w) {
				return true
			}
		}
	}
	return false
}
