// Package review holds the domain shared by every stage of the pipeline:
// reviews, their files and ledger items with their statuses, stages, risk
// types, severities, findings and verdicts. It has no dependencies on
// storage, queues or the LLM client: the store persists these types and
// declares none of its own for them.
package review

import (
	"fmt"
	"strings"
)

// RiskType classifies what kind of problem a finding describes.
type RiskType string

// The risk types a finding can carry.
const (
	Robustness    RiskType = "robustness"    // boundary conditions
	Concurrency   RiskType = "concurrency"   // timing correctness
	Authorization RiskType = "authorization" // data exposure
	Intent        RiskType = "intent"        // semantic consistency with the change's purpose
	Lifecycle     RiskType = "lifecycle"     // state consistency
	Static        RiskType = "static"        // syntax / static errors
	MemorySafety  RiskType = "memory_safety" // out-of-bounds, use-after-free, unsound unsafe code (C/C++, unsafe Rust, cgo)
	ResourceLeak  RiskType = "resource_leak" // files, connections, goroutines, timers never released
)

// RiskTypes lists every risk type in a stable order.
var RiskTypes = []RiskType{Robustness, Concurrency, Authorization, Intent, Lifecycle, Static, MemorySafety, ResourceLeak}

// ParseRiskType normalises s and reports whether it names a known risk type.
func ParseRiskType(s string) (RiskType, error) {
	r := RiskType(strings.ToLower(strings.TrimSpace(s)))
	for _, k := range RiskTypes {
		if k == r {
			return r, nil
		}
	}
	return "", fmt.Errorf("unknown risk type %q", s)
}

// Severity is how bad a finding is if it is real.
type Severity string

// Severities from worst to mildest.
const (
	Critical Severity = "critical"
	High     Severity = "high"
	Medium   Severity = "medium"
	Low      Severity = "low"
	Info     Severity = "info"
)

// Severities lists every severity from worst to mildest.
var Severities = []Severity{Critical, High, Medium, Low, Info}

// ParseSeverity normalises s and reports whether it names a known severity.
func ParseSeverity(s string) (Severity, error) {
	v := Severity(strings.ToLower(strings.TrimSpace(s)))
	for _, k := range Severities {
		if k == v {
			return v, nil
		}
	}
	return "", fmt.Errorf("unknown severity %q", s)
}

// Rank orders severities: 0 is the worst. Unknown severities sort last.
func (s Severity) Rank() int {
	for i, k := range Severities {
		if k == s {
			return i
		}
	}
	return len(Severities)
}

// FindingStatus is where a finding stands in the pipeline.
type FindingStatus string

// Finding statuses.
const (
	StatusActive  FindingStatus = "active"  // still being reviewed
	StatusDropped FindingStatus = "dropped" // removed by the manager (reason kept)
	StatusMerged  FindingStatus = "merged"  // folded into another finding
	StatusFailed  FindingStatus = "failed"  // a stage could not process it
)

// Finding is one candidate risk raised by the intent stage.
type Finding struct {
	ID          int64    `json:"id"`
	ReviewID    string   `json:"review_id"`
	RiskType    RiskType `json:"risk_type"`
	File        string   `json:"file"`
	LineStart   int      `json:"line_start"`
	LineEnd     int      `json:"line_end"`
	Description string   `json:"description"`
	Suggestion  string   `json:"suggestion"`
	// Quote is the code the finding is about, as it reads in the head
	// version; Fix is a proposed fix as a unified diff against it. Both
	// are empty when the model gave none that checks out.
	Quote      string        `json:"quote,omitempty"`
	Fix        string        `json:"fix,omitempty"`
	Severity   Severity      `json:"severity"`
	Confidence float64       `json:"confidence"`
	Status     FindingStatus `json:"status"`
	DropReason string        `json:"drop_reason,omitempty"`
	MergedInto int64         `json:"merged_into,omitempty"`
	// Fingerprint identifies the finding across reviews of the same change
	// line (see internal/fingerprint); empty for findings stored before
	// fingerprints existed.
	Fingerprint string `json:"fingerprint,omitempty"`
	// CarriedFrom is the finding of an earlier review this one was copied
	// from because its file did not change (0 when reviewed here).
	CarriedFrom int64 `json:"carried_from,omitempty"`
	// ResolvedIn is the later review that re-reviewed the file and no
	// longer raised this finding ("" while unresolved).
	ResolvedIn string `json:"resolved_in,omitempty"`
}

// Stage names a pipeline stage. The names are permanent identifiers: they are
// stored in Postgres and form part of task type names.
type Stage string

// The pipeline stages in order. Manager is deterministic and runs inline
// during the intent → verify transition; it has no task type of its own.
const (
	StageIntent  Stage = "intent"
	StageManager Stage = "manager"
	StageVerify  Stage = "verify"
	StageExpert  Stage = "expert"
	StageEval    Stage = "eval"
	StageReport  Stage = "report"
	StageDone    Stage = "done"
)

// Verdict values written to the verdicts table.
const (
	VerdictAnchored     = "anchored"
	VerdictUnanchored   = "unanchored"
	VerdictConfirmed    = "confirmed"
	VerdictRefuted      = "refuted"
	VerdictInconclusive = "inconclusive"
	VerdictDisputed     = "disputed"
	VerdictUncertain    = "uncertain"
	VerdictSkipped      = "skipped"
	VerdictFailed       = "failed"
)

// ClampConfidence bounds c to [0, 1].
func ClampConfidence(c float64) float64 {
	switch {
	case c != c: // NaN
		return 0
	case c < 0:
		return 0
	case c > 1:
		return 1
	}
	return c
}
