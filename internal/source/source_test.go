package source

import (
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want int
	}{{"", 0}, {"a", 1}, {"a\n", 1}, {"a\r\nb\r\n", 2}, {"a\n\nb", 3}}
	for _, c := range cases {
		got := Split(c.in)
		if len(got) != c.want {
			t.Errorf("Split(%q) = %d lines, want %d", c.in, len(got), c.want)
		}
		for _, l := range got {
			if strings.HasSuffix(l, "\r") {
				t.Errorf("Split(%q) kept a carriage return", c.in)
			}
		}
	}
}

func TestWindow(t *testing.T) {
	t.Parallel()
	content := "1\n2\n3\n4\n5\n"
	w := Window(content, 2, 3, 1)
	if len(w) != 4 || w[0].No != 1 || w[3].No != 4 || w[3].Text != "4" {
		t.Fatalf("Window = %+v", w)
	}
	if Window(content, 9, 12, 2) != nil {
		t.Fatal("a range past the end of the file must give no lines")
	}
	if w := Window(content, 5, 4, 0); len(w) != 2 || w[0].No != 4 {
		t.Fatalf("swapped range: %+v", w)
	}
}

func TestExcerpt(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		b.WriteString("line\n")
	}
	out := Excerpt(b.String(), []int{10, 80}, 2, 50)
	if !strings.Contains(out, "   10 | line") || !strings.Contains(out, "   80 | line") {
		t.Fatalf("focus lines missing:\n%s", out)
	}
	if strings.Contains(out, "   50 | line") {
		t.Fatalf("line far from focus shown:\n%s", out)
	}
	small := Excerpt("a\nb\n", []int{1}, 1, 50)
	if small != "    1 | a\n    2 | b\n" {
		t.Fatalf("small file: %q", small)
	}
}
