// Package redact finds credentials in text and replaces each with a stable
// marker, [REDACTED:kind:N], before the text reaches a model or storage.
//
// The rules live in one table (rules.go): provider-shaped tokens (AWS,
// GitHub, GitLab, Slack, Stripe, OpenAI, Azure), private-key blocks, JWTs,
// passwords in URLs and connection strings, and assignments to
// secret-looking names in .env, YAML, JSON and source code. A Redactor
// numbers the values it meets per kind, so one value gets one marker in
// every text the Redactor sees — the files, diffs and purpose of one review.
//
// Redaction keeps the line structure: a marker never spans or removes a
// line break, and a multi-line secret (a PEM block, a YAML block scalar)
// becomes one marker per line, so the line numbers of findings stay right.
// Diff lines (prefixed ' ', '+' or '-') are redacted like any other line.
package redact
