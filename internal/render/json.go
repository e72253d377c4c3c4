package render

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/reviewfleet/reviewfleet/internal/review"
)

// JSON encodes the report in the documented schema (SCHEMA.md, version
// SchemaVersion): snake_case keys, times in RFC 3339 UTC to the second (null
// when unset), arrays always present and never null, object keys in a fixed
// order, two-space indentation and a final newline. The same report always
// encodes to the same bytes. It fails on a nil report, a report of another
// schema version, or a non-finite number.
func JSON(r *Report) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("encode report: nil report")
	}
	if r.SchemaVersion != 0 && r.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("encode report %s: schema version %d, this encoder writes %d", r.ReviewID, r.SchemaVersion, SchemaVersion)
	}
	if err := checkFinite(r); err != nil {
		return nil, fmt.Errorf("encode report %s: %w", r.ReviewID, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(toJSON(r)); err != nil {
		return nil, fmt.Errorf("encode report %s: %w", r.ReviewID, err)
	}
	return buf.Bytes(), nil
}

// DecodeJSON reads a report written by JSON. It rejects documents of another
// schema version; unknown keys are ignored so that additions stay readable.
// Findings get the report's review ID.
func DecodeJSON(data []byte) (*Report, error) {
	var j jsonReport
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	if j.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("decode report: schema_version %d, want %d", j.SchemaVersion, SchemaVersion)
	}
	created, err := parseTime(j.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("decode report created_at: %w", err)
	}
	finished, err := parseTime(j.FinishedAt)
	if err != nil {
		return nil, fmt.Errorf("decode report finished_at: %w", err)
	}
	r := &Report{
		SchemaVersion:  j.SchemaVersion,
		ToolVersion:    j.ToolVersion,
		ReviewID:       j.ReviewID,
		Repo:           j.Repo,
		BaseRef:        j.BaseRef,
		HeadRef:        j.HeadRef,
		BaseSHA:        j.BaseSHA,
		HeadSHA:        j.HeadSHA,
		Status:         j.Status,
		Error:          j.Error,
		IntentMode:     j.IntentMode,
		SkippedStages:  nonNil(j.SkippedStages),
		Notes:          nonNil(j.Notes),
		CreatedAt:      created,
		FinishedAt:     finished,
		Threshold:      j.Threshold,
		Findings:       fromJSONFindings(j.Findings, j.ReviewID),
		BelowThreshold: fromJSONFindings(j.BelowThreshold, j.ReviewID),
		Dropped:        fromJSONFindings(j.Dropped, j.ReviewID),
		NotReviewed:    make([]NotReviewed, len(j.NotReviewed)),
		FailedItems:    make([]FailedItem, len(j.FailedItems)),
		Interrupted:    j.Interrupted,
		StoppedAt:      j.StoppedAt,
		StagesNotRun:   nilIfEmpty(j.StagesNotRun),
		EvalSummary:    make(map[review.RiskType]EvalCounts, len(j.EvalSummary)),
		Usage:          Usage{LLMCalls: j.Usage.LLMCalls, TokensIn: j.Usage.TokensIn, TokensOut: j.Usage.TokensOut, Cost: j.Usage.Cost},
		ConfigWarnings: j.ConfigWarnings,
	}
	r.Calibrated = j.Calibrated
	if len(j.Resolved) > 0 {
		r.Resolved = fromJSONFindings(j.Resolved, "") // findings of an earlier review
	}
	if len(r.ConfigWarnings) == 0 {
		r.ConfigWarnings = nil
	}
	for i, n := range j.NotReviewed {
		r.NotReviewed[i] = NotReviewed(n)
	}
	for i, f := range j.FailedItems {
		r.FailedItems[i] = FailedItem(f)
	}
	for _, f := range j.NotRun {
		r.NotRun = append(r.NotRun, FailedItem(f))
	}
	for rt, c := range j.EvalSummary {
		r.EvalSummary[review.RiskType(rt)] = EvalCounts(c)
	}
	return r, nil
}

type jsonReport struct {
	SchemaVersion int    `json:"schema_version"`
	ToolVersion   string `json:"tool_version"`
	ReviewID      string `json:"review_id"`
	Repo          string `json:"repo"`
	BaseRef       string `json:"base_ref"`
	HeadRef       string `json:"head_ref"`
	BaseSHA       string `json:"base_sha"`
	HeadSHA       string `json:"head_sha"`
	Status        string `json:"status"`
	Error         string `json:"error"`
	Incomplete    bool   `json:"incomplete"`
	FailedCount   int    `json:"failed_item_count"`
	// NotRunCount counts the items a failed review never finished
	// (not_run); failed_item_count counts only those that failed.
	NotRunCount    int                       `json:"not_run_count"`
	IntentMode     string                    `json:"intent_mode"`
	SkippedStages  []string                  `json:"skipped_stages"`
	Notes          []string                  `json:"notes"`
	CreatedAt      *string                   `json:"created_at"`
	FinishedAt     *string                   `json:"finished_at"`
	Threshold      float64                   `json:"threshold"`
	Findings       []jsonFinding             `json:"findings"`
	BelowThreshold []jsonFinding             `json:"below_threshold"`
	Dropped        []jsonFinding             `json:"dropped"`
	NotReviewed    []jsonNotReviewed         `json:"not_reviewed"`
	FailedItems    []jsonFailedItem          `json:"failed_items"`
	Interrupted    bool                      `json:"interrupted"`
	StoppedAt      string                    `json:"stopped_at,omitempty"`
	NotRun         []jsonFailedItem          `json:"not_run"`
	StagesNotRun   []string                  `json:"stages_not_run"`
	EvalSummary    map[string]jsonEvalCounts `json:"eval_summary"`
	Usage          jsonUsage                 `json:"usage"`
	ConfigWarnings []ConfigWarning           `json:"config_warnings"`
	Resolved       []jsonFinding             `json:"resolved"`
	Calibrated     []CalibratedThreshold     `json:"calibrated_thresholds,omitempty"`
}

type jsonFinding struct {
	ID          int64         `json:"id"`
	RiskType    string        `json:"risk_type"`
	Severity    string        `json:"severity"`
	File        string        `json:"file"`
	LineStart   int           `json:"line_start"`
	LineEnd     int           `json:"line_end"`
	Confidence  float64       `json:"confidence"`
	Description string        `json:"description"`
	Suggestion  string        `json:"suggestion"`
	Quote       string        `json:"quote,omitempty"`
	Fix         string        `json:"fix,omitempty"`
	Status      string        `json:"status"`
	DropReason  string        `json:"drop_reason"`
	MergedInto  *int64        `json:"merged_into"`
	Fingerprint string        `json:"fingerprint,omitempty"`
	CarriedFrom *int64        `json:"carried_from"`
	Number      int           `json:"number"`
	Code        []jsonCode    `json:"code"`
	CodeNote    string        `json:"code_note,omitempty"`
	Trail       []jsonVerdict `json:"trail"`
	Expert      *jsonExpert   `json:"expert"`
	Why         *jsonReason   `json:"below_threshold_reason"`
	// StoppedAt and StagesNotRun: in a failed review, the last stage that
	// judged the finding and those that never did (Finding.StoppedAt).
	StoppedAt    string   `json:"stopped_at,omitempty"`
	StagesNotRun []string `json:"stages_not_run,omitempty"`
	// CodeHash, KindKey and Learned: see Finding.
	CodeHash string       `json:"code_hash,omitempty"`
	KindKey  string       `json:"kind_key,omitempty"`
	Learned  *jsonLearned `json:"learned,omitempty"`
}

// jsonReason is why a finding is below its threshold (see Reason); null
// on every other finding.
type jsonReason struct {
	Stage        string   `json:"stage"`
	Kind         string   `json:"kind"`
	Threshold    float64  `json:"threshold"`
	Detail       string   `json:"detail"`
	FailedChecks []string `json:"failed_checks"`
}

type jsonCode struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

type jsonVerdict struct {
	Stage            string   `json:"stage"`
	Verdict          string   `json:"verdict"`
	ConfidenceBefore float64  `json:"confidence_before"`
	ConfidenceAfter  float64  `json:"confidence_after"`
	Reason           string   `json:"reason"`
	Evidence         []string `json:"evidence"`
	Model            string   `json:"model"`
}

type jsonExpert struct {
	StopReason string   `json:"stop_reason"`
	Rounds     int      `json:"rounds"`
	ToolCalls  int      `json:"tool_calls"`
	Evidence   []string `json:"evidence"`
	// Tools is the tool-health summary of the run: calls by tool and
	// outcome, {"grep": {"hit": 3, "empty": 1}, …}.
	Tools map[string]map[string]int `json:"tools"`
}

// withTools returns the tool summary to write: {} rather than null.
func withTools(t map[string]map[string]int) map[string]map[string]int {
	if t == nil {
		return map[string]map[string]int{}
	}
	return t
}

type jsonNotReviewed struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

type jsonFailedItem struct {
	Stage   string `json:"stage"`
	ItemKey string `json:"item_key"`
	Error   string `json:"error"`
}

type jsonEvalCounts struct {
	Confirmed int `json:"confirmed"`
	Disputed  int `json:"disputed"`
	Uncertain int `json:"uncertain"`
}

type jsonUsage struct {
	LLMCalls  int     `json:"llm_calls"`
	TokensIn  int     `json:"tokens_in"`
	TokensOut int     `json:"tokens_out"`
	Cost      float64 `json:"cost_usd,omitempty"`
}

func toJSON(r *Report) jsonReport {
	j := jsonReport{
		SchemaVersion:  SchemaVersion,
		ToolVersion:    r.ToolVersion,
		ReviewID:       r.ReviewID,
		Repo:           r.Repo,
		BaseRef:        r.BaseRef,
		HeadRef:        r.HeadRef,
		BaseSHA:        r.BaseSHA,
		HeadSHA:        r.HeadSHA,
		Status:         r.Status,
		Error:          r.Error,
		Incomplete:     r.Incomplete(),
		FailedCount:    len(r.FailedItems),
		NotRunCount:    len(r.NotRun),
		IntentMode:     r.IntentMode,
		SkippedStages:  nonNil(r.SkippedStages),
		Notes:          nonNil(r.Notes),
		CreatedAt:      formatTime(r.CreatedAt),
		FinishedAt:     formatTime(r.FinishedAt),
		Threshold:      round3(r.Threshold),
		Findings:       toJSONFindings(r.Findings, 1, nil),
		BelowThreshold: toJSONFindings(r.BelowThreshold, 1+len(r.Findings), func(f Finding) Reason { return whyNot(f, true, r.Threshold, nil) }),
		Dropped:        toJSONFindings(r.Dropped, 1+len(r.Findings)+len(r.BelowThreshold), nil), // drop_reason says why
		NotReviewed:    make([]jsonNotReviewed, len(r.NotReviewed)),
		FailedItems:    make([]jsonFailedItem, len(r.FailedItems)),
		Interrupted:    r.Interrupted,
		StoppedAt:      r.StoppedAt,
		NotRun:         make([]jsonFailedItem, len(r.NotRun)),
		StagesNotRun:   nonNil(r.StagesNotRun),
		EvalSummary:    make(map[string]jsonEvalCounts, len(r.EvalSummary)),
		Usage:          jsonUsage{LLMCalls: r.Usage.LLMCalls, TokensIn: r.Usage.TokensIn, TokensOut: r.Usage.TokensOut, Cost: math.Round(r.Usage.Cost*1e6) / 1e6},
		ConfigWarnings: nonNil(r.ConfigWarnings),
		Resolved:       toJSONFindings(r.Resolved, 1+len(r.Findings)+len(r.BelowThreshold)+len(r.Dropped), nil),
		Calibrated:     r.Calibrated,
	}
	for i, n := range r.NotReviewed {
		j.NotReviewed[i] = jsonNotReviewed(n)
	}
	for i, f := range r.FailedItems {
		j.FailedItems[i] = jsonFailedItem(f)
	}
	for i, f := range r.NotRun {
		j.NotRun[i] = jsonFailedItem(f)
	}
	for rt, c := range r.EvalSummary {
		j.EvalSummary[string(rt)] = jsonEvalCounts(c)
	}
	return j
}

// toJSONFindings encodes fs, numbering them from first on (see numbers);
// why, when given, says why each is below its threshold. Confidences are rounded
// to three decimals: 0.08, not the 0.08000000000000002 arithmetic leaves.
func toJSONFindings(fs []Finding, first int, why func(Finding) Reason) []jsonFinding {
	out := make([]jsonFinding, len(fs))
	for i, f := range fs {
		ex := capCode(f.Code)
		jf := jsonFinding{
			Number:       first + i,
			CodeNote:     cmp.Or(f.CodeNote, ex.note()),
			ID:           f.ID,
			RiskType:     string(f.RiskType),
			Severity:     string(f.Severity),
			File:         f.File,
			LineStart:    f.LineStart,
			LineEnd:      f.LineEnd,
			Confidence:   round3(f.Confidence),
			Description:  f.Description,
			Suggestion:   f.Suggestion,
			Quote:        f.Quote,
			Fix:          f.Fix,
			Status:       string(f.Status),
			DropReason:   f.DropReason,
			MergedInto:   link(f.MergedInto),
			Fingerprint:  f.Fingerprint,
			CarriedFrom:  link(f.CarriedFrom),
			Code:         make([]jsonCode, len(ex.Lines)),
			Trail:        make([]jsonVerdict, 0, len(f.Trail)),
			StoppedAt:    f.StoppedAt,
			StagesNotRun: f.MissedStages,
			CodeHash:     f.CodeHash,
			KindKey:      f.KindKey,
			Learned:      toJSONLearned(f.Learned),
		}
		for k, c := range ex.Lines {
			jf.Code[k] = jsonCode(c)
		}
		for _, v := range orderedTrail(f.Trail) {
			jf.Trail = append(jf.Trail, jsonVerdict{
				Stage:            v.Stage,
				Verdict:          v.Verdict,
				ConfidenceBefore: round3(v.ConfidenceBefore),
				ConfidenceAfter:  round3(v.ConfidenceAfter),
				Reason:           v.Reason,
				Evidence:         nonNil(v.Evidence),
				Model:            v.Model,
			})
		}
		if x := f.Expert; x != nil {
			jf.Expert = &jsonExpert{StopReason: stopReason(f), Rounds: x.Rounds, ToolCalls: x.ToolCalls, Evidence: nonNil(x.Evidence)}
		}
		if why != nil {
			w := why(f)
			jf.Why = &jsonReason{Stage: w.Stage, Kind: w.Kind, Threshold: round3(w.Threshold), Detail: w.Detail, FailedChecks: nonNil(w.FailedChecks)}
		}
		if jf.Expert != nil {
			jf.Expert.Tools = withTools(f.Expert.Tools)
		}
		out[i] = jf
	}
	return out
}

func fromJSONFindings(js []jsonFinding, reviewID string) []Finding {
	out := make([]Finding, len(js))
	for i, j := range js {
		f := Finding{
			Finding: review.Finding{
				ID:          j.ID,
				ReviewID:    reviewID,
				RiskType:    review.RiskType(j.RiskType),
				File:        j.File,
				LineStart:   j.LineStart,
				LineEnd:     j.LineEnd,
				Description: j.Description,
				Suggestion:  j.Suggestion,
				Quote:       j.Quote,
				Fix:         j.Fix,
				Severity:    review.Severity(j.Severity),
				Confidence:  j.Confidence,
				Status:      review.FindingStatus(j.Status),
				DropReason:  j.DropReason,
				MergedInto:  unlink(j.MergedInto),
				Fingerprint: j.Fingerprint,
				CarriedFrom: unlink(j.CarriedFrom),
			},
			Code:         make([]CodeLine, len(j.Code)),
			CodeNote:     j.CodeNote,
			Trail:        make([]Verdict, len(j.Trail)),
			StoppedAt:    j.StoppedAt,
			MissedStages: j.StagesNotRun,
			CodeHash:     j.CodeHash,
			KindKey:      j.KindKey,
			Learned:      fromJSONLearned(j.Learned),
		}
		for k, c := range j.Code {
			f.Code[k] = CodeLine(c)
		}
		for k, v := range j.Trail {
			f.Trail[k] = Verdict{
				Stage:            v.Stage,
				Verdict:          v.Verdict,
				ConfidenceBefore: v.ConfidenceBefore,
				ConfidenceAfter:  v.ConfidenceAfter,
				Reason:           v.Reason,
				Evidence:         nonNil(v.Evidence),
				Model:            v.Model,
			}
		}
		if x := j.Expert; x != nil {
			f.Expert = &ExpertRun{StopReason: x.StopReason, Rounds: x.Rounds, ToolCalls: x.ToolCalls, Evidence: nonNil(x.Evidence)}
		}
		if w := j.Why; w != nil {
			f.Why = &Reason{Stage: w.Stage, Kind: w.Kind, Threshold: w.Threshold, Detail: w.Detail, FailedChecks: nilIfEmpty(w.FailedChecks)}
		}
		if f.Expert != nil && len(j.Expert.Tools) > 0 {
			f.Expert.Tools = j.Expert.Tools
		}
		out[i] = f
	}
	return out
}

func formatTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

func parseTime(s *string) (time.Time, error) {
	if s == nil {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, *s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse time %q: %w", *s, err)
	}
	return t.UTC(), nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// checkFinite reports the first NaN or infinite number in the report, which
// JSON cannot represent.
func checkFinite(r *Report) error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	if bad(r.Threshold) {
		return fmt.Errorf("threshold is %v", r.Threshold)
	}
	for _, list := range [][]Finding{r.Findings, r.BelowThreshold, r.Dropped} {
		for _, f := range list {
			if bad(f.Confidence) {
				return fmt.Errorf("finding %d: confidence is %v", f.ID, f.Confidence)
			}
			for _, v := range f.Trail {
				if bad(v.ConfidenceBefore) || bad(v.ConfidenceAfter) {
					return fmt.Errorf("finding %d: %s verdict confidence is %v→%v", f.ID, v.Stage, v.ConfidenceBefore, v.ConfidenceAfter)
				}
			}
		}
	}
	return nil
}

// nilIfEmpty keeps a decoded empty list nil, as an unset one is.
func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// round3 rounds a confidence to three decimals for the reader: the
// pipeline's arithmetic (0.8 × 0.1) leaves digits that mean nothing.
func round3(v float64) float64 {
	return math.Round(v*1000) / 1000
}

// link encodes a finding ID that may be absent: null, never 0, when there
// is none.
func link(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// unlink reads a link written by link; reports of earlier versions wrote
// 0 for none, which reads the same.
func unlink(id *int64) int64 {
	if id == nil {
		return 0
	}
	return *id
}
