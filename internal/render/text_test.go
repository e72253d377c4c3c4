package render

import (
	"strings"
	"testing"
)

func TestEscapeHTML(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"returns Option<T> now", "returns Option&lt;T> now"},
		{"`Vec<T>` stays", "`Vec<T>` stays"},
		{"``a ` <b>`` and <c>", "``a ` <b>`` and &lt;c>"},
		{"unclosed ` <x>", "unclosed ` &lt;x>"},
	}
	for _, tt := range tests {
		if got := escapeHTML(tt.in); got != tt.want {
			t.Errorf("escapeHTML(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCellAndCodeSpan(t *testing.T) {
	t.Parallel()
	if got, want := cell("a | b\nc"), `a \| b c`; got != want {
		t.Errorf("cell = %q, want %q", got, want)
	}
	tests := []struct{ in, want string }{
		{"a.go", "`a.go`"},
		{"a`b.go", "``a`b.go``"},
		{"`x", "`` `x ``"},
		{"a|b", "`a|b`"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := codeSpan(tt.in); got != tt.want {
			t.Errorf("codeSpan(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got, want := cellCode("a|b"), "`a\\|b`"; got != want {
		t.Errorf("cellCode = %q, want %q", got, want)
	}
}

func TestBlock(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"plain", "one\ntwo", "one\ntwo"},
		{"heading neutralised", "# Title\ntext", "\\# Title\ntext"},
		{"setext underline neutralised", "text\n---\n===", "text\n\\---\n\\==="},
		{"list kept", "- a\n- b", "- a\n- b"},
		{"html escaped outside code", "<details> and `<ok>`", "&lt;details> and `<ok>`"},
		{"fenced block left alone", "```\n<x>\n# y\n```\nafter <z>", "```\n<x>\n# y\n```\nafter &lt;z>"},
		{"unclosed fence closed", "```go\nx := 1", "```go\nx := 1\n```"},
		{"longer fence needs longer close", "````\n```\nstill code", "````\n```\nstill code\n````"},
		{"CRLF and outer space", "  a\r\nb  \n", "a\nb"},
		{"empty", "  ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := block(tt.in); got != tt.want {
				t.Errorf("block(%q) =\n%q\nwant\n%q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSmallFormatters(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
	if got := truncate("abcdef", 4); got != "abc…" {
		t.Errorf("truncate = %q", got)
	}
	if got := truncate("日本語", 3); got != "日本語" {
		t.Errorf("truncate cut a short string: %q", got)
	}
	if got, want := normaliseText("  Nil-Map  WRITE!\n"), "nil map write"; got != want {
		t.Errorf("normaliseText = %q, want %q", got, want)
	}
	for in, want := range map[string]string{"./a/b.go": "a/b.go", `a\b.go`: "a/b.go", "/x": "x", "": ""} {
		if got := cleanPath(in); got != want {
			t.Errorf("cleanPath(%q) = %q, want %q", in, got, want)
		}
	}
	if got := strings.Count(plural(1, "file")+plural(2, "file"), "files"); got != 1 {
		t.Errorf("plural: %q %q", plural(1, "file"), plural(2, "file"))
	}
}

func TestFences(t *testing.T) {
	t.Parallel()
	open := map[string]string{
		"```":        "```",
		"   ~~~~ go": "~~~~",
		"```go":      "```",
		"    ```":    "", // indented code, not a fence
		"```a`b":     "", // backtick in the info string: not a fence
		"~~~a`b":     "~~~",
		"``":         "",
		"text ```":   "",
	}
	for line, want := range open {
		if got := openingFence(line); got != want {
			t.Errorf("openingFence(%q) = %q, want %q", line, got, want)
		}
	}
	closes := []struct {
		line, fence string
		want        bool
	}{
		{"```", "```", true},
		{"   ````  ", "```", true},
		{"    ```", "```", false},
		{"``", "```", false},
		{"~~~", "```", false},
		{"``` x", "```", false},
	}
	for _, tt := range closes {
		if got := closesFence(tt.line, tt.fence); got != tt.want {
			t.Errorf("closesFence(%q, %q) = %v, want %v", tt.line, tt.fence, got, tt.want)
		}
	}
}
