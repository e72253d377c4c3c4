package fingerprint

import "testing"

const goSrc = `package p

import "fmt"

type Server struct {
	addr string
}

func (s *Server) Run() error {
	fmt.Println(s.addr)
	return nil
}

// Helper helps.
func Helper[T any](v T) T {
	return v
}

var x = 1
`

func TestSymbolGo(t *testing.T) {
	for line, want := range map[int]string{
		1: "", 6: "Server", 10: "Server.Run", 12: "Server.Run", 17: "Helper", 20: "", 14: "",
	} {
		if got := Symbol("p/s.go", goSrc, line); got != want {
			t.Errorf("line %d: %q, want %q", line, got, want)
		}
	}
}

const pySrc = `import os

class Store:
    def get(self, key):
        if key:
            return os.environ[key]
        return None

    def put(self, key, v):
        pass

def top():
    return 1

x = top()
`

func TestSymbolGeneric(t *testing.T) {
	for line, want := range map[int]string{
		1: "", 3: "Store", 6: "get", 7: "get", 10: "put", 13: "top", 15: "",
	} {
		if got := Symbol("s.py", pySrc, line); got != want {
			t.Errorf("python line %d: %q, want %q", line, got, want)
		}
	}
	js := "export async function load(url) {\n  const r = await fetch(url);\n  return r;\n}\n\nconst y = 2;\n"
	for line, want := range map[int]string{2: "load", 6: ""} {
		if got := Symbol("a.js", js, line); got != want {
			t.Errorf("js line %d: %q, want %q", line, got, want)
		}
	}
	c := "static int parse(const char *s)\n{\n    if (s == NULL) {\n        return -1;\n    }\n    return 0;\n}\n"
	if got := Symbol("a.c", c, 4); got != "parse" {
		t.Errorf("c: %q, want parse", got)
	}
}

func TestHunkSymbol(t *testing.T) {
	if got := HunkSymbol("a.go", "func (c *Client) Do(req *Request) error {"); got != "Client.Do" {
		t.Errorf("go hunk: %q", got)
	}
	if got := HunkSymbol("a.py", "    def close(self):"); got != "close" {
		t.Errorf("python hunk: %q", got)
	}
}
