package manager

import (
	"fmt"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// applyCaps applies rule 4: survivors are kept best first while their file,
// their risk type and the total are all under their caps; the rest are
// dropped in decisions with the first cap that stopped them.
func applyCaps(survivors []*candidate, decisions []Decision, cfg Config) {
	sortByRank(survivors)
	perFile := make(map[string]int)
	perType := make(map[review.RiskType]int)
	total := 0
	for _, c := range survivors {
		reason := ""
		switch {
		case cfg.MaxPerFile > 0 && perFile[c.file] >= cfg.MaxPerFile:
			reason = fmt.Sprintf("%s: %d findings already kept in %s (cap %d)", ReasonCapPerFile, perFile[c.file], c.file, cfg.MaxPerFile)
		case cfg.MaxPerRiskType > 0 && perType[c.riskType] >= cfg.MaxPerRiskType:
			reason = fmt.Sprintf("%s: %d %s findings already kept (cap %d)", ReasonCapPerRiskType, perType[c.riskType], c.riskType, cfg.MaxPerRiskType)
		case cfg.MaxTotal > 0 && total >= cfg.MaxTotal:
			reason = fmt.Sprintf("%s: %d findings already kept (cap %d)", ReasonCapTotal, total, cfg.MaxTotal)
		}
		if reason != "" {
			d := &decisions[c.index]
			d.Status = review.StatusDropped
			d.Reason = reason
			continue
		}
		perFile[c.file]++
		perType[c.riskType]++
		total++
	}
}
