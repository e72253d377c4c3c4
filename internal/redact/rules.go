package redact

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Rule is one kind of secret found on a single line: a pattern whose
// group Group is the secret value, and an optional filter of candidate
// values. Multi-line secrets (private-key blocks, YAML block scalars,
// values continued on the next line) and assignments to secret-looking
// names are found by code in block.go and assign.go, listed at the end of
// the table for completeness.
type Rule struct {
	// Kind names the secret in its marker: [REDACTED:Kind:N].
	Kind string
	// Pattern matches on one line; Group is the submatch holding the value.
	Pattern *regexp.Regexp
	Group   int
	// Valid filters a matched value; nil accepts every match.
	Valid func(value string) bool
	// Hints are lower-case strings one of which a line must contain for
	// the pattern to be tried: a cheap filter, most lines have none.
	Hints []string
}

// Rules is the single table of line patterns, most specific first: where
// two rules match overlapping text, the earlier one wins.
var Rules = []Rule{
	// An inline PEM block (JSON's private_key with \n escapes, a one-line
	// string literal): everything between the armour lines.
	{Kind: "private-key", Group: 1, Pattern: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(.+?)-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`), Hints: []string{"private key"}},
	// GCP service-account JSON.
	{Kind: "gcp-private-key", Group: 1, Pattern: regexp.MustCompile(`"private_key"\s*:\s*"([^"]{16,})"`), Hints: []string{"private_key"}},
	{Kind: "gcp-private-key-id", Group: 1, Pattern: regexp.MustCompile(`"private_key_id"\s*:\s*"([A-Za-z0-9]{16,})"`), Hints: []string{"private_key_id"}},
	// AWS access key ids (long-term AKIA, temporary ASIA and the other
	// documented prefixes). The format is specific enough to redact every
	// match: AWS's published example keys and made-up ones that are not
	// base32 look exactly like real ones to a reader, so they go too.
	{Kind: "aws-access-key-id", Group: 1, Pattern: regexp.MustCompile(`\b((?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16})\b`), Hints: []string{"akia", "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "aroa", "apka", "asca"}},
	// An access key id and its secret side by side, as the console's
	// credentials CSV and many notes write them: the 40 characters after
	// the id on the same line.
	{Kind: "aws-secret", Group: 1, Pattern: regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}["']?[ \t]*[,;:|\t ][ \t]*["']?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`), Hints: []string{"akia", "asia"}},
	// AWS secret access keys assigned to aws_secret* names in any style;
	// 40 characters of key alphabet is specific enough that an "EXAMPLE"
	// inside does not make it a placeholder.
	{Kind: "aws-secret", Group: 1, Pattern: regexp.MustCompile(`(?i)aws_?secret[A-Za-z0-9_]*["']?\s*(?::=|=|:|=>)\s*["']?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`), Hints: []string{"secret"}},
	// Azure storage connection strings and SAS tokens.
	{Kind: "azure-storage-key", Group: 1, Pattern: regexp.MustCompile(`(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})`), Hints: []string{"accountkey=", "sharedaccesskey="}},
	{Kind: "azure-sas", Group: 1, Pattern: regexp.MustCompile(`(?i)(?:SharedAccessSignature=|[?&;]|\b)sig=([A-Za-z0-9%+/=]{20,})`), Hints: []string{"sig="}},
	// Azure AD client secrets (the current format with "Q~" in place 4-5).
	{Kind: "azure-client-secret", Group: 1, Pattern: regexp.MustCompile(`(?:^|[^A-Za-z0-9_~.\-])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34})(?:[^A-Za-z0-9_~.\-]|$)`), Hints: []string{"q~"}},
	// A token split into concatenated literals ("ghp_ab" + "cd…") so that
	// no single literal has the token's full length: the literals from the
	// one holding the prefix to the last one joined to it.
	{Kind: "split-token", Group: 1, Pattern: regexp.MustCompile(`["'\x60]((?:gh[pousr]_|github_pat_|glpat-|xox[abprs]-|[sr]k_live_|sk_test_|sk-|dckr_pat_|AKIA|ASIA|AIza|hf_|npm_)[A-Za-z0-9_\-]*(?:["'\x60]\s*\+\s*["'\x60][A-Za-z0-9_\-/+=]+)+)["'\x60]`), Hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "_live_", "sk_test_", "sk-", "dckr_pat_", "akia", "asia", "aiza", "hf_", "npm_"}},
	// GitHub tokens: personal, OAuth, user-to-server, server-to-server,
	// refresh, and fine-grained personal tokens.
	{Kind: "github-token", Group: 1, Pattern: regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9]{36,255})\b`), Hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}},
	{Kind: "github-token", Group: 1, Pattern: regexp.MustCompile(`\b(github_pat_[A-Za-z0-9_]{22,255})\b`), Hints: []string{"github_pat_"}},
	{Kind: "gitlab-token", Group: 1, Pattern: regexp.MustCompile(`\b(gl(?:pat|dt|rt|ptt|cbt|soat)-[A-Za-z0-9_\-]{20,})`), Hints: []string{"gl"}},
	{Kind: "slack-token", Group: 1, Pattern: regexp.MustCompile(`\b(xox[abprs]-[A-Za-z0-9\-]{10,})`), Hints: []string{"xox"}},
	{Kind: "slack-webhook", Group: 1, Pattern: regexp.MustCompile(`hooks\.slack\.com/services/([A-Za-z0-9/]{20,})`), Hints: []string{"hooks.slack.com"}},
	{Kind: "stripe-key", Group: 1, Pattern: regexp.MustCompile(`\b((?:sk|rk)_live_[A-Za-z0-9]{16,})\b`), Hints: []string{"_live_"}},
	// OpenAI keys: legacy sk-…, project sk-proj-…, service-account and
	// admin keys.
	{Kind: "openai-key", Group: 1, Pattern: regexp.MustCompile(`\b(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,})`), Valid: mixedToken, Hints: []string{"sk-"}},
	// JSON Web Tokens: base64url header and payload that both start "{".
	{Kind: "jwt", Group: 1, Pattern: regexp.MustCompile(`\b(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})`), Hints: []string{"eyj"}},
	// user:password@host in any URL (a user part holding "[" is a marker
	// of an earlier pass, not a user: redacting stays idempotent).
	// The password runs to the last @ of the authority: a password may
	// hold an unescaped @.
	{Kind: "url-password", Group: 1, Pattern: regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'"\[]*:([^\s/'"]+)@[^\s@/'"]*`), Valid: notPlaceholder, Hints: []string{"://"}},
	// Password=…; in ADO.NET, ODBC and JDBC connection strings.
	{Kind: "password", Group: 1, Pattern: regexp.MustCompile(`(?i)(?:^|[;\s"'?&])(?:password|pwd)=([^;'"\s&]+)`), Valid: notPlaceholder, Hints: []string{"password=", "pwd="}},
	// Credentials in query strings: ?access_token=…&api_key=….
	{Kind: "url-token", Group: 1, Pattern: regexp.MustCompile(`(?i)[?&](?:access_token|auth_token|token|api_key|apikey|client_secret|secret|password|sig|signature)=([^&\s"'#]+)`), Valid: strongValue, Hints: []string{"token=", "key=", "secret=", "password=", "sig=", "signature="}},
	// HTTP authorization headers of any provider.
	{Kind: "bearer-token", Group: 1, Pattern: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)`), Valid: strongValue, Hints: []string{"bearer"}},
	// Go's Header.Set("Authorization", "Basic …") puts a comma where a
	// header line has its colon.
	{Kind: "basic-auth", Group: 1, Pattern: regexp.MustCompile(`(?i)\bauthorization["']?\s*[:=,]\s*["']?basic\s+([A-Za-z0-9+/]{8,}=*)`), Valid: notPlaceholder, Hints: []string{"basic"}},
	// A user's password given to a client: curl -u user:pass,
	// SetBasicAuth("user", "pass"), requests' auth=("user", "pass").
	{Kind: "password", Group: 1, Pattern: regexp.MustCompile(`(?:^|\s)(?:-u|--user)[ =]+['"]?[^\s:'"]*:([^\s'"]+)`), Valid: notUID, Hints: []string{"-u", "--user"}},
	{Kind: "password", Group: 1, Pattern: regexp.MustCompile(`(?i)basicauth\(\s*(?:[^,()]*,\s*)?(?:"[^"]*"|'[^']*'|[A-Za-z_][\w.]*)\s*,\s*["'\x60]([^"'\x60]+)["'\x60]`), Valid: notPlaceholder, Hints: []string{"basicauth("}},
	{Kind: "password", Group: 1, Pattern: regexp.MustCompile(`\bauth\s*=\s*\(\s*["'][^"']*["']\s*,\s*["']([^"']+)["']`), Valid: notPlaceholder, Hints: []string{"auth"}},
	// An Authorization header with any other scheme (token, SSWS, Digest,
	// a vendor's own): the credential after the scheme word.
	{Kind: "auth-header", Group: 1, Pattern: regexp.MustCompile(`(?i)\bauthorization["']?\s*(?:=>|[:=,])\s*["']?(?:token|ssws|digest|apikey|api-key|key|hmac|sharedkey|splunk|klaviyo-api-key|[a-z][a-z0-9_-]*-token)\s+([A-Za-z0-9\-._~+/=]{12,})`), Valid: notPlaceholder, Hints: []string{"authorization"}},
	// A password handed to a client as the last argument of a log-in or
	// connect call: smtplib's login(user, pw), JDBC's
	// getConnection(url, user, pw), LDAP binds, Go's PlainAuth.
	{Kind: "password", Group: 1, Pattern: regexp.MustCompile(`(?i)\b(?:login|getconnection|authenticate|simple_bind_s|bind_s|connect_with_password|with_?credentials|set_?credentials)\s*\((?:[^()]*?,\s*)["'\x60]([^"'\x60]{4,})["'\x60]\s*\)`), Valid: notPlaceholder, Hints: []string{"login", "getconnection", "authenticate", "bind_s", "credentials", "password"}},
	{Kind: "password", Group: 1, Pattern: regexp.MustCompile(`\bPlainAuth\(\s*[^,()]*,\s*[^,()]*,\s*["'\x60]([^"'\x60]{4,})["'\x60]`), Valid: notPlaceholder, Hints: []string{"plainauth("}},
	// Credentials given to a command as flags: --password S, --db-password=S,
	// --token S, --api-key=S. A password flag takes any literal that is not
	// a word, path or variable; the token flags only strong values, since
	// such a flag often names where a token is rather than holding it. The
	// value stops at a quote or backtick: the flag is often inside one.
	{Kind: "password", Group: 1, Pattern: regexp.MustCompile(`(?:^|\s)--(?:[a-z0-9]+-)*(?:password|passwd)(?:=|\s+)["'\x60]?([^\s"'\x60;]+)`), Valid: iniValue, Hints: []string{"-password", "-passwd"}},
	{Kind: "secret", Group: 1, Pattern: regexp.MustCompile(`(?:^|\s)--(?:[a-z0-9]+-)*(?:token|api-key|apikey|client-secret|secret-key|secret-access-key)(?:=|\s+)["'\x60]?([^\s"'\x60;]+)`), Valid: strongValue, Hints: []string{"-token", "-api-key", "-apikey", "-client-secret", "-secret-key", "-secret-access-key"}},
	// .netrc and redis.conf write the keyword, a space, the password.
	{Kind: "password", Group: 1, Pattern: regexp.MustCompile(`^\s*[+\- ]?(?:requirepass|masterauth)\s+([^\s#]+)\s*$`), Valid: notPlaceholder, Hints: []string{"requirepass", "masterauth"}},
	{Kind: "password", Group: 1, Pattern: regexp.MustCompile(`\blogin\s+\S+\s+password\s+(\S+)`), Valid: notPlaceholder, Hints: []string{"password "}},
	// Formats gitleaks finds only beside its provider's name, while the
	// shape alone is distinctive.
	{Kind: "telegram-bot-token", Group: 1, Pattern: regexp.MustCompile(`\b(\d{8,10}:AA[A-Za-z0-9_\-]{33})(?:[^A-Za-z0-9_\-]|$)`), Hints: []string{":aa"}},
	{Kind: "mailgun-key", Group: 1, Pattern: regexp.MustCompile(`\b(key-[0-9a-f]{32})\b`), Hints: []string{"key-"}},
	{Kind: "dockerhub-token", Group: 1, Pattern: regexp.MustCompile(`\b(dckr_pat_[A-Za-z0-9_\-]{20,})`), Hints: []string{"dckr_pat_"}},
	{Kind: "discord-token", Group: 1, Pattern: regexp.MustCompile(`(?:^|[^A-Za-z0-9_\-.])([MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40})(?:[^A-Za-z0-9_\-.]|$)`), Valid: mixedToken, Hints: []string{"."}},
	{Kind: "twilio-auth-token", Group: 1, Pattern: regexp.MustCompile(`(?i)twilio.*["']([0-9a-f]{32})["']`), Hints: []string{"twilio"}},
	{Kind: "doppler-token", Group: 1, Pattern: regexp.MustCompile(`\b(dp\.(?:st|pt|ct|sa|scim|audit)\.(?:[A-Za-z0-9_\-]{1,35}\.)?[A-Za-z0-9]{40,44})\b`), Hints: []string{"dp."}},
	// age's secret keys; the prefix alone identifies one.
	{Kind: "age-secret-key", Group: 1, Pattern: regexp.MustCompile(`\b(AGE-SECRET-KEY-1[0-9A-Z]{58})\b`), Hints: []string{"age-secret-key-1"}},
	// Password hashes (htpasswd, shadow, bcrypt): crackable offline.
	{Kind: "password-hash", Group: 1, Pattern: regexp.MustCompile(`(\$(?:apr1|2[abxy]|1|5|6|y|argon2id?)\$[A-Za-z0-9./$=,+]{20,})`), Hints: []string{"$apr1$", "$2", "$1$", "$5$", "$6$", "$y$", "$argon2"}},
	// A .pgpass line: host:port:database:user:password.
	{Kind: "password", Group: 1, Pattern: regexp.MustCompile(`^\s*[+\- ]?[^\s:#][^\s:]*:(?:\d+|\*):[^\s:]+:[^\s:]+:(\S+)\s*$`), Valid: notPlaceholder, Hints: []string{":"}},
	// A PuTTY key file's MAC is keyed by the private key's passphrase.
	{Kind: "private-key", Group: 1, Pattern: regexp.MustCompile(`Private-MAC:\s*([0-9a-fA-F]{32,})`), Hints: []string{"private-mac"}},
	// Kubeconfig's base64 client key.
	{Kind: "private-key", Group: 1, Pattern: regexp.MustCompile(`client-key-data["']?\s*:\s*["']?([A-Za-z0-9+/=]{16,})`), Hints: []string{"client-key-data"}},
	// Not patterns, for the record — found by code:
	//   private-key  -----BEGIN … PRIVATE KEY----- blocks over several lines (block.go)
	//   secret, password, aws-secret, azure-client-secret
	//                assignments to secret-looking names: .env lines
	//                (any value that is not a placeholder), YAML, JSON and
	//                source (strong values only), including block scalars
	//                and values continued on the next lines (assign.go)
	//                name and value apart: <add key=… value=…>, fish's and
	//                cmd's set NAME value, map["NAME"] = … (assign.go);
	//                Kubernetes env name:/value: lines, <setting> with
	//                <value> below, a YAML value or list on the next line
	//                (block.go)
}

// zeroWidth are the invisible characters a token can be split with so
// that no pattern sees its prefix and body together: zero-width space,
// non-joiner and joiner, word joiner, and the byte-order mark.
const zeroWidth = "\u200b\u200c\u200d\u2060\ufeff"

// foldedHits is ruleHits on the line with zero-width characters taken
// out, its hits mapped back onto the line as given: the value replaced
// includes the characters hidden inside it.
func foldedHits(l string) []hit {
	// Every zero-width character starts with byte 0xE2 or 0xEF: lines
	// without either (nearly all) skip the rune scan.
	if (strings.IndexByte(l, 0xE2) < 0 && strings.IndexByte(l, 0xEF) < 0) || !strings.ContainsAny(l, zeroWidth) {
		return ruleHits(l)
	}
	var b strings.Builder
	at := make([]int, 0, len(l)+1) // at[k] is where byte k of the folded line is in l
	for i := 0; i < len(l); {
		c, n := utf8.DecodeRuneInString(l[i:])
		if strings.ContainsRune(zeroWidth, c) {
			i += n
			continue
		}
		b.WriteString(l[i : i+n])
		for k := range n {
			at = append(at, i+k)
		}
		i += n
	}
	hits := ruleHits(b.String())
	for i, h := range hits {
		hits[i] = hit{at[h.start], at[h.end-1] + 1, h.kind}
	}
	return hits
}
