package diff

import "fmt"

// ParseError reports malformed diff input.
type ParseError struct {
	// Line is the 1-based number of the input line where the problem was
	// found; one past the last line when the input ended too early.
	Line int
	// Msg says what was wrong.
	Msg string
}

// Error implements error.
func (e *ParseError) Error() string {
	return fmt.Sprintf("diff line %d: %s", e.Line, e.Msg)
}

// errorf builds a *ParseError for line n.
func errorf(n int, format string, args ...any) *ParseError {
	return &ParseError{Line: n, Msg: fmt.Sprintf(format, args...)}
}

// excerpt shortens an input line for an error message.
func excerpt(s string) string {
	const limit = 60
	if len(s) > limit {
		return fmt.Sprintf("%q…", s[:limit])
	}
	return fmt.Sprintf("%q", s)
}
