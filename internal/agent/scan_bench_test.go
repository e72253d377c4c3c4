package agent

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkGrepTree greps a tree of 2,000 files in 100 directories, the
// walk and reads the sandbox does for every grep and find_symbol call.
func BenchmarkGrepTree(b *testing.B) {
	root := b.TempDir()
	files := map[string]string{}
	for d := 0; d < 100; d++ {
		for f := 0; f < 20; f++ {
			files[fmt.Sprintf("pkg%03d/sub/f%02d.go", d, f)] = fmt.Sprintf("package p\n\nfunc F%d() int { return %d }\n", f, d)
		}
	}
	writeFiles(b, root, files)
	sb, err := newSandbox(root, 1<<20, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := grepTool(context.Background(), sb, nil, grepArgs{Pattern: "return 42"})
		if err != nil || res.text == "" {
			b.Fatal(err)
		}
	}
}
