package manager

import (
	"math"
	"slices"
	"testing"
)

func TestTokenise(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"lowercases and sorts", "Nil Pointer nil", []string{"nil", "pointer"}},
		{"drops stop words", "the map is read without the lock", []string{"lock", "map", "read", "without"}},
		{"drops one-character tokens", "x y z index i", []string{"index"}},
		{"splits on punctuation", "user.ID, (token)->expiry!", []string{"expiry", "id", "token", "user"}},
		{"keeps identifiers with underscores", "check user_id now", []string{"check", "now", "user_id"}},
		{"keeps digits", "retry 3 times after 429", []string{"429", "after", "retry", "times"}},
		{"han bigrams", "空指针 nil", []string{"nil", "指针", "空指"}},
		{"single han character dropped", "锁", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tokenise(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("tokenise(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestJaccard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b []string
		want float64
	}{
		{"both empty", nil, nil, 0},
		{"one empty", []string{"a1"}, nil, 0},
		{"identical", []string{"lock", "map"}, []string{"lock", "map"}, 1},
		{"disjoint", []string{"lock"}, []string{"map"}, 0},
		{"half", []string{"lock", "map", "read"}, []string{"lock", "map", "write"}, 0.5},
		{"subset", []string{"lock"}, []string{"lock", "map", "read", "write"}, 0.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := jaccard(tt.a, tt.b)
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("jaccard(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if back := jaccard(tt.b, tt.a); back != got {
				t.Errorf("jaccard is not symmetric: %v vs %v", got, back)
			}
		})
	}
}
