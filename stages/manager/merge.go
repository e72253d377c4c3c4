package manager

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// groupKey identifies the findings that may merge with each other.
type groupKey struct {
	file     string
	riskType review.RiskType
}

// merge applies rule 3. Candidates in the same file with the same risk type,
// whose ranges are within cfg.MergeLineDistance and whose descriptions are
// similar enough, are joined transitively; each group keeps its best member
// (see better) and the others are marked merged into it in decisions. It
// returns the survivors.
func merge(cands []candidate, decisions []Decision, cfg Config) []*candidate {
	uf := newUnionFind(len(cands))
	if cfg.MergeSimilarity <= 1 {
		joinSimilar(cands, uf, cfg)
	}

	groups := make(map[int][]*candidate)
	for i := range cands {
		root := uf.find(i)
		groups[root] = append(groups[root], &cands[i])
	}
	survivors := make([]*candidate, 0, len(groups))
	for _, members := range groups {
		sortByRank(members)
		best := members[0]
		survivors = append(survivors, best)
		for _, m := range members[1:] {
			d := &decisions[m.index]
			d.Status = review.StatusMerged
			d.MergedInto = best.id
			d.Reason = fmt.Sprintf("%s:%d", ReasonDuplicateOf, best.id)
		}
	}
	return survivors
}

// joinSimilar unions every pair of candidates that rule 3 calls duplicates.
// Only pairs in the same file and risk type whose ranges are near are
// compared, so the cost grows with the number of nearby findings, not with
// the square of all findings.
func joinSimilar(cands []candidate, uf *unionFind, cfg Config) {
	dist := max(cfg.MergeLineDistance, 0)
	byKey := make(map[groupKey][]int)
	for i, c := range cands {
		k := groupKey{c.file, c.riskType}
		byKey[k] = append(byKey[k], i)
	}
	tokens := make([][]string, len(cands))
	done := make([]bool, len(cands))
	tokensOf := func(i int) []string {
		if !done[i] {
			tokens[i], done[i] = tokenise(cands[i].text), true
		}
		return tokens[i]
	}
	for _, idx := range byKey {
		if len(idx) < 2 {
			continue
		}
		slices.SortFunc(idx, func(a, b int) int {
			return cmp.Or(cmp.Compare(cands[a].start, cands[b].start), cmp.Compare(a, b))
		})
		for x, i := range idx {
			for _, j := range idx[x+1:] {
				// Sorted by start: once j starts too far after i ends, so
				// does every later one.
				if cands[j].start-cands[i].end > dist {
					break
				}
				if rangeGap(cands[i].start, cands[i].end, cands[j].start, cands[j].end) > dist {
					continue
				}
				if jaccard(tokensOf(i), tokensOf(j)) >= cfg.MergeSimilarity {
					uf.union(i, j)
				}
			}
		}
	}
}

// unionFind is a disjoint-set forest over 0..n-1.
type unionFind struct {
	parent []int
	rank   []int
}

func newUnionFind(n int) *unionFind {
	uf := &unionFind{parent: make([]int, n), rank: make([]int, n)}
	for i := range uf.parent {
		uf.parent[i] = i
	}
	return uf
}

func (u *unionFind) find(x int) int {
	for u.parent[x] != x {
		u.parent[x] = u.parent[u.parent[x]]
		x = u.parent[x]
	}
	return x
}

func (u *unionFind) union(a, b int) {
	ra, rb := u.find(a), u.find(b)
	if ra == rb {
		return
	}
	switch {
	case u.rank[ra] < u.rank[rb]:
		ra, rb = rb, ra
	case u.rank[ra] == u.rank[rb]:
		u.rank[ra]++
	}
	u.parent[rb] = ra
}
