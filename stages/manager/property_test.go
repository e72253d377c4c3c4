package manager

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// randomCase builds n random findings over a handful of files, with a vocabulary
// small enough that merges happen, plus the changed lines of those files.
func randomCase(rng *rand.Rand, n int) ([]review.Finding, map[string][]int) {
	files := make([]string, 3+rng.IntN(12))
	changed := make(map[string][]int)
	for i := range files {
		files[i] = fmt.Sprintf("pkg%d/file%d.go", i%3, i)
		if i == 0 {
			continue // one file of the findings is not in the change
		}
		var lines []int
		for l := 1; l < 400; l++ {
			if rng.IntN(20) == 0 {
				lines = append(lines, l)
			}
		}
		changed[files[i]] = lines
	}
	words := strings.Fields("nil map lock race overflow index bounds token leak close channel deadlock retry timeout user admin query")
	severities := append([]review.Severity{"unknown"}, review.Severities...)
	ids := rng.Perm(n * 3)
	findings := make([]review.Finding, n)
	for i := range findings {
		start := rng.IntN(420) - 5
		end := start + rng.IntN(8) - 1 // sometimes swapped
		var d []string
		for range 2 + rng.IntN(4) {
			d = append(d, words[rng.IntN(len(words))])
		}
		findings[i] = review.Finding{
			ID:          int64(ids[i] + 1),
			RiskType:    review.RiskTypes[rng.IntN(len(review.RiskTypes))],
			File:        files[rng.IntN(len(files))],
			LineStart:   start,
			LineEnd:     end,
			Description: strings.Join(d, " "),
			Severity:    severities[rng.IntN(len(severities))],
			Confidence:  float64(rng.IntN(11)) / 10, // coarse, so scores tie
			Status:      review.StatusActive,
		}
	}
	return findings, changed
}

func randomConfig(rng *rand.Rand) Config {
	cfg := DefaultConfig()
	cfg.AnchorWindow = rng.IntN(10)
	cfg.MergeLineDistance = rng.IntN(5)
	cfg.MergeSimilarity = []float64{0.3, 0.5, 0.7, 1}[rng.IntN(4)]
	cfg.MaxPerFile = rng.IntN(6)
	cfg.MaxPerRiskType = rng.IntN(9)
	cfg.MaxTotal = rng.IntN(20)
	return cfg
}

// ahead reports whether decision a ranks before b in the caps order.
// aheadIn ranks decisions as Plan does: higher score, then by place and
// text (file, lines, risk type, description), then lower ID.
func aheadIn(findings []review.Finding) func(a, b Decision) bool {
	byID := make(map[int64]review.Finding, len(findings))
	for _, f := range findings {
		byID[f.ID] = f
	}
	return func(a, b Decision) bool {
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		fa, fb := byID[a.FindingID], byID[b.FindingID]
		if c := cmp.Or(cmp.Compare(cleanPath(fa.File), cleanPath(fb.File)), cmp.Compare(a.LineStart, b.LineStart),
			cmp.Compare(a.LineEnd, b.LineEnd), cmp.Compare(fa.RiskType, fb.RiskType),
			cmp.Compare(fa.Description, fb.Description)); c != 0 {
			return c < 0
		}
		return a.FindingID < b.FindingID
	}
}

func TestPlanProperties(t *testing.T) {
	t.Parallel()
	knownCodes := map[string]bool{
		ReasonFileNotInChange: true, ReasonInvalidRange: true, ReasonFarFromChange: true,
		ReasonDuplicateOf: true, ReasonCapPerFile: true, ReasonCapPerRiskType: true, ReasonCapTotal: true,
	}
	seen := make(map[string]int)
	defer func() {
		// The generator must reach every rule, or the checks above prove little.
		for code := range knownCodes {
			if seen[code] == 0 {
				t.Errorf("no random case produced %s", code)
			}
		}
	}()
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		findings, changed := randomCase(rng, 1+rng.IntN(120))
		cfg := randomConfig(rng)
		decisions := Plan(findings, changed, cfg)
		ahead := aheadIn(findings)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d, cfg %+v: %s", seed, cfg, fmt.Sprintf(format, args...))
		}

		if len(decisions) != len(findings) {
			fail("%d decisions for %d findings", len(decisions), len(findings))
		}
		byID := make(map[int64]int)
		perFile := make(map[string]int)
		perType := make(map[review.RiskType]int)
		total := 0
		for i, d := range decisions {
			f := findings[i]
			byID[d.FindingID] = i
			seen[ReasonCode(d.Reason)]++
			if d.FindingID != f.ID {
				fail("decision %d is for %d, want %d", i, d.FindingID, f.ID)
			}
			switch d.Status {
			case review.StatusActive:
				if d.Reason != "" {
					fail("active finding %d has reason %q", f.ID, d.Reason)
				}
				if d.LineStart < 1 || d.LineEnd < d.LineStart {
					fail("active finding %d has range %d-%d", f.ID, d.LineStart, d.LineEnd)
				}
				dist, ok := distanceToChange(d.LineStart, d.LineEnd, changed[f.File])
				if !ok || dist > cfg.AnchorWindow {
					fail("active finding %d is %d lines from the change (window %d)", f.ID, dist, cfg.AnchorWindow)
				}
				perFile[f.File]++
				perType[f.RiskType]++
				total++
			case review.StatusDropped, review.StatusMerged:
				if !knownCodes[ReasonCode(d.Reason)] {
					fail("finding %d (%s) has reason %q", f.ID, d.Status, d.Reason)
				}
			default:
				fail("finding %d has status %q", f.ID, d.Status)
			}
		}
		if cfg.MaxTotal > 0 && total > cfg.MaxTotal {
			fail("kept %d findings, cap %d", total, cfg.MaxTotal)
		}
		for file, n := range perFile {
			if cfg.MaxPerFile > 0 && n > cfg.MaxPerFile {
				fail("kept %d findings in %s, cap %d", n, file, cfg.MaxPerFile)
			}
		}
		for rt, n := range perType {
			if cfg.MaxPerRiskType > 0 && n > cfg.MaxPerRiskType {
				fail("kept %d %s findings, cap %d", n, rt, cfg.MaxPerRiskType)
			}
		}

		for i, d := range decisions {
			f := findings[i]
			switch ReasonCode(d.Reason) {
			case ReasonDuplicateOf:
				j, ok := byID[d.MergedInto]
				if !ok {
					fail("finding %d merged into unknown finding %d", f.ID, d.MergedInto)
				}
				switch ReasonCode(decisions[j].Reason) {
				case "", ReasonCapPerFile, ReasonCapPerRiskType, ReasonCapTotal:
				default:
					fail("finding %d merged into %d, which was %s", f.ID, d.MergedInto, decisions[j].Reason)
				}
				if findings[j].File != f.File || findings[j].RiskType != f.RiskType {
					fail("finding %d merged into %d across file or risk type", f.ID, d.MergedInto)
				}
				if ahead(d, decisions[j]) {
					fail("finding %d (score %v) merged into the weaker %d (score %v)", f.ID, d.Score, d.MergedInto, decisions[j].Score)
				}
			case ReasonCapTotal:
				// Greedy: exactly MaxTotal kept findings rank ahead of it.
				n := 0
				for _, o := range decisions {
					if o.Status == review.StatusActive && ahead(o, d) {
						n++
					}
				}
				if n != cfg.MaxTotal {
					fail("finding %d dropped by cap_total with %d kept ahead of it (cap %d)", f.ID, n, cfg.MaxTotal)
				}
			case ReasonCapPerFile:
				n := 0
				for k, o := range decisions {
					if o.Status == review.StatusActive && findings[k].File == f.File && ahead(o, d) {
						n++
					}
				}
				if n != cfg.MaxPerFile {
					fail("finding %d dropped by cap_per_file with %d kept ahead in its file (cap %d)", f.ID, n, cfg.MaxPerFile)
				}
			}
		}
	}
}

func TestPlanIgnoresInputOrder(t *testing.T) {
	t.Parallel()
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 11))
		findings, changed := randomCase(rng, 80)
		cfg := randomConfig(rng)
		want := make(map[int64]Decision)
		for _, d := range Plan(findings, changed, cfg) {
			want[d.FindingID] = d
		}
		shuffled := append([]review.Finding(nil), findings...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for _, d := range Plan(shuffled, changed, cfg) {
			if want[d.FindingID] != d {
				t.Fatalf("seed %d: finding %d decided %+v in one order and %+v in another", seed, d.FindingID, want[d.FindingID], d)
			}
		}
	}
}

func BenchmarkPlan(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	findings, changed := randomCase(rng, 1000)
	cfg := DefaultConfig()
	b.ReportAllocs()
	for b.Loop() {
		Plan(findings, changed, cfg)
	}
}
