package redact

import (
	"fmt"
	"slices"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// ruleHints finds, in one pass over a lower-cased line, which rules' hints
// it holds. Asking each rule in turn cost a search per hint, about a
// hundred and fifty per line, and every line of a review's tree is read.
type ruleHints struct {
	trie *ahocorasick.Trie
	// of[i] are the numbers of Rules[i]'s hints in the trie; nil for a rule
	// without hints, which is always tried.
	of [][]int
}

// rulesHinted is the index of the Rules table.
var rulesHinted = newRuleHints(Rules)

func newRuleHints(rules []Rule) *ruleHints {
	ids := map[string]int{}
	var words []string
	h := &ruleHints{of: make([][]int, len(rules))}
	for i, r := range rules {
		for _, w := range r.Hints {
			id, ok := ids[w]
			if !ok {
				id = len(words)
				ids[w] = id
				words = append(words, w)
			}
			if !slices.Contains(h.of[i], id) {
				h.of[i] = append(h.of[i], id)
			}
		}
	}
	if len(words) > maxHints {
		panic(fmt.Sprintf("redact: %d distinct rule hints, more than the %d a hintSet holds", len(words), maxHints))
	}
	h.trie = ahocorasick.NewTrieBuilder().AddStrings(words).Build()
	return h
}

// hintSet says which hints a line holds, a bit per hint.
type hintSet [maxHints / 64]uint64

// maxHints bounds the distinct hints of the table.
const maxHints = 256

func (s *hintSet) add(id int)      { s[id/64] |= 1 << (id % 64) }
func (s *hintSet) has(id int) bool { return s[id/64]&(1<<(id%64)) != 0 }

// find reports the hints low holds.
func (h *ruleHints) find(low string) hintSet {
	var found hintSet
	h.trie.Walk([]byte(low), func(_, _, pattern int64) bool {
		found.add(int(pattern))
		return true
	})
	return found
}

// tried reports whether rule i is to be tried on a line holding found.
func (h *ruleHints) tried(i int, found hintSet) bool {
	if h.of[i] == nil {
		return true
	}
	for _, id := range h.of[i] {
		if found.has(id) {
			return true
		}
	}
	return false
}
