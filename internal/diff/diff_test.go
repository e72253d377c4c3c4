package diff

import (
	"math"
	"slices"
	"testing"
)

// parseOne parses in and returns its only file.
func parseOne(t *testing.T, in string) *File {
	t.Helper()
	files, err := Parse([]byte(in))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(files) != 1 {
		t.Fatalf("Parse found %d files, want 1", len(files))
	}
	return files[0]
}

func TestFileLineQueries(t *testing.T) {
	t.Parallel()
	const head = "diff --git a/f b/f\n--- a/f\n+++ b/f\n"
	tests := []struct {
		name                 string
		in                   string
		added, changed       []int
		wantAdded, wantDel   int
		wantPath, wantStatus string
	}{
		{
			name:      "replacement anchors on the added line only",
			in:        head + "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
			added:     []int{2},
			changed:   []int{2},
			wantAdded: 1, wantDel: 1,
		},
		{
			name:      "added before deleted is still a replacement",
			in:        head + "@@ -1,2 +1,2 @@\n a\n+B\n-b\n",
			added:     []int{2},
			changed:   []int{2},
			wantAdded: 1, wantDel: 1,
		},
		{
			name:    "pure deletion inside a hunk anchors on the following line",
			in:      head + "@@ -1,4 +1,2 @@\n a\n-b\n-c\n d\n",
			changed: []int{2},
			wantDel: 2,
		},
		{
			name:    "pure deletion at the end of a hunk anchors on the line before",
			in:      head + "@@ -7,3 +7,2 @@\n a\n b\n-c\n",
			changed: []int{8},
			wantDel: 1,
		},
		{
			name:    "zero-context deletion anchors on the line it follows",
			in:      head + "@@ -5,2 +4,0 @@\n-x\n-y\n",
			changed: []int{4},
			wantDel: 2,
		},
		{
			name:    "deletion at the top of a file anchors on line 1",
			in:      head + "@@ -1,2 +0,0 @@\n-x\n-y\n",
			changed: []int{1},
			wantDel: 2,
		},
		{
			name: "several hunks mixing additions and deletions",
			in: head + "@@ -1,3 +1,4 @@\n a\n+n1\n+n2\n-b\n c\n" +
				"@@ -10,3 +11,2 @@\n x\n-y\n z\n" +
				"@@ -20,0 +20,1 @@\n+tail\n",
			added:     []int{2, 3, 20},
			changed:   []int{2, 3, 12, 20},
			wantAdded: 3, wantDel: 2,
		},
		{
			name:       "deleted file has no new side",
			in:         "diff --git a/f b/f\ndeleted file mode 100644\n--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n",
			wantDel:    2,
			wantPath:   "f",
			wantStatus: "deleted",
		},
		{
			name:       "renamed file reports its new path",
			in:         "diff --git a/old b/new\nrename from old\nrename to new\n--- a/old\n+++ b/new\n@@ -1 +1,2 @@\n a\n+b\n",
			added:      []int{2},
			changed:    []int{2},
			wantAdded:  1,
			wantPath:   "new",
			wantStatus: "renamed",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := parseOne(t, tc.in)
			if got := f.AddedLines(); !slices.Equal(got, tc.added) {
				t.Errorf("AddedLines = %v, want %v", got, tc.added)
			}
			if got := f.ChangedNewLines(); !slices.Equal(got, tc.changed) {
				t.Errorf("ChangedNewLines = %v, want %v", got, tc.changed)
			}
			if a, d := f.Stats(); a != tc.wantAdded || d != tc.wantDel {
				t.Errorf("Stats = %d, %d, want %d, %d", a, d, tc.wantAdded, tc.wantDel)
			}
			wantPath, wantStatus := tc.wantPath, tc.wantStatus
			if wantPath == "" {
				wantPath, wantStatus = "f", "modified"
			}
			if f.Path() != wantPath || string(f.Status) != wantStatus {
				t.Errorf("Path, Status = %q, %q, want %q, %q", f.Path(), f.Status, wantPath, wantStatus)
			}
		})
	}
}

func TestNearestChange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		changed []int
		line    int
		want    int
	}{
		{"on a changed line", []int{3, 9}, 9, 0},
		{"between two changes", []int{3, 9}, 5, 2},
		{"before all changes", []int{3, 9}, 1, 2},
		{"after all changes", []int{3, 9}, 15, 6},
		{"unsorted input", []int{40, 2, 17}, 20, 3},
		{"no changes", nil, 5, math.MaxInt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := NearestChange(tc.changed, tc.line); got != tc.want {
				t.Errorf("NearestChange(%v, %d) = %d, want %d", tc.changed, tc.line, got, tc.want)
			}
		})
	}
}

func TestSizeOfHandBuiltFile(t *testing.T) {
	t.Parallel()
	f := &File{OldPath: "a", NewPath: "a", Status: StatusModified, Hunks: []Hunk{{
		OldStart: 1, OldCount: 1, NewStart: 1, NewCount: 1,
		Lines: []Line{{Kind: Deleted, Text: "x", OldNo: 1}, {Kind: Added, Text: "y", NewNo: 1}},
	}}}
	if got, want := f.Size(), len(f.Text()); got != want || got == 0 {
		t.Errorf("Size = %d, want len(Text) = %d", got, want)
	}
}
