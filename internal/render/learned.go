package render

// Learned is what the repository's feedback did to a finding, said in the
// report so nothing learned acts unseen.
type Learned struct {
	// Dismissed: the same finding on the same code was dismissed in this
	// repository before. It stays in the report but is not posted again.
	Dismissed bool
	// Similar counts the dismissed findings of the same kind (risk type,
	// claim, enclosing symbol) elsewhere in the repository; each lowered
	// this finding's confidence from ConfidenceBefore.
	Similar          int
	ConfidenceBefore float64
	// Learning is the fingerprint of the learning that applied
	// (reviewfleet learnings show).
	Learning string
	// Note says it in a sentence.
	Note string
}

// CalibratedThreshold is a threshold the repository's outcomes set for a
// risk type (harness.calibrate), with why.
type CalibratedThreshold struct {
	RiskType  string  `json:"risk_type"`
	Threshold float64 `json:"threshold"`
	Base      float64 `json:"base"`
	Reason    string  `json:"reason"`
}

type jsonLearned struct {
	Dismissed        bool    `json:"dismissed"`
	Similar          int     `json:"similar"`
	ConfidenceBefore float64 `json:"confidence_before"`
	Learning         string  `json:"learning"`
	Note             string  `json:"note"`
}

func toJSONLearned(l *Learned) *jsonLearned {
	if l == nil {
		return nil
	}
	return &jsonLearned{Dismissed: l.Dismissed, Similar: l.Similar, ConfidenceBefore: round3(l.ConfidenceBefore), Learning: l.Learning, Note: l.Note}
}

func fromJSONLearned(j *jsonLearned) *Learned {
	if j == nil {
		return nil
	}
	l := Learned(*j)
	return &l
}
