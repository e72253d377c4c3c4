package prompts

import (
	"reflect"
	"slices"
	"testing"
)

// FuzzDetect feeds arbitrary text to the detectors: they must not panic,
// DetectPacks must always return a sorted subset of the packs without
// duplicates, and the packs must be those of the signals, or every pack when
// the change carries code but no signal fires.
func FuzzDetect(f *testing.F) {
	f.Add("a.go", hunkOf(` x := 1`, `-	if !ok {`, `+	if ok {`, `+	go run(ch)`))
	f.Add("a.py", hunkOf(`+def f(x=[]):`, `-    if not x:`, `+    if x:`))
	f.Add("a.js", "@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n")
	f.Add("", "@@ -1,5 +1,1 @@\n")
	f.Add("x.rb", "+++ b/x\n--- a/x\n@@@\n+\n-\n")
	f.Add("y.ts", "--- a/y.ts\n+++ b/y.ts\n@@ -0,0 +1,2 @@\n+  if (a && b || c) {\n+    user?.x ?? 0")
	f.Add("d.go", hunkOf(` Docs.`, `+More docs.`, ` */`, `+import (`, `+	"sync"`, `+)`))
	f.Add("m.py", "@@ -1,3 +1,3 @@\n+\"\"\"Doc.\n \"\"\"\n-import os\n")
	f.Fuzz(func(t *testing.T, path, text string) {
		packs := DetectPacks(path, text)
		if !slices.IsSorted(packs) || len(slices.Compact(slices.Clone(packs))) != len(packs) {
			t.Fatalf("DetectPacks = %v", packs)
		}
		for _, p := range packs {
			if !slices.Contains(AllPacks, p) {
				t.Fatalf("unknown pack %q", p)
			}
		}
		hits := DetectSignals(path, text)
		for _, h := range hits {
			if !slices.Contains(packs, h.Pack) {
				t.Fatalf("signal %q fired but pack %s is not in %v", h.Signal, h.Pack, packs)
			}
		}
		if len(packs) == 0 && len(hits) > 0 {
			t.Fatalf("no packs although signals fired: %+v", hits)
		}
		refs := DetectReferences(text)
		if !slices.IsSorted(refs) {
			t.Fatalf("DetectReferences = %v", refs)
		}
		// The literal test before each pattern changes no hit.
		c := newChange(path, text)
		got, gotCode := c.signals(path)
		unfiltered(c)
		if want, wantCode := c.signals(path); !reflect.DeepEqual(got, want) || gotCode != wantCode {
			t.Fatalf("hits with the literal test %v (code %v), without %v (code %v)", got, gotCode, want, wantCode)
		}
	})
}
