package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/fingerprint"
	"github.com/reviewfleet/reviewfleet/internal/review"
)

// SARIF constants.
const (
	sarifVersion = "2.1.0"
	sarifSchema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	// toolInformationURI is where the SARIF driver points readers.
	toolInformationURI = "https://github.com/reviewfleet/reviewfleet"
	// fingerprintKey names the partial fingerprint; its version changes when the
	// hash input ever does, so consumers do not match old and new hashes.
	fingerprintKey = "reviewfleetFinding/v2"
	// srcRoot is the base every artifact URI is relative to.
	srcRoot = "%SRCROOT%"
)

// ruleText describes each known risk type for the SARIF rules.
var ruleText = map[review.RiskType]struct{ name, short, full string }{
	review.Robustness:    {"RobustnessRisk", "Boundary conditions", "Inputs, nil values, empty collections, limits or errors the changed code does not handle."},
	review.Concurrency:   {"ConcurrencyRisk", "Timing correctness", "Races, missing synchronisation, ordering assumptions or leaks between concurrent work."},
	review.Authorization: {"AuthorizationRisk", "Data exposure", "Missing or wrong permission checks, injection, or data reaching someone who should not see it."},
	review.Intent:        {"IntentRisk", "Semantic consistency with the change's purpose", "Logic that does not do what the change sets out to do."},
	review.Lifecycle:     {"LifecycleRisk", "State consistency", "State created, updated, cached or released inconsistently over an object's life."},
	review.Static:        {"StaticRisk", "Syntax and static errors", "Code that does not compile, type-check or parse."},
	review.MemorySafety:  {"MemorySafetyRisk", "Memory safety", "Out-of-bounds access, use after free, double free, uninitialised memory or unsound unsafe code."},
	review.ResourceLeak:  {"ResourceLeakRisk", "Resource leaks", "Files, connections, response bodies, goroutines, timers or contexts acquired and never released."},
}

// SARIF encodes the reported findings (r.Findings) as a SARIF 2.1.0 log with
// one run: one rule per risk type present, one result per finding with a
// level from its severity (critical and high → error, medium → warning, low
// and info → note), its location relative to %SRCROOT%, its confidence,
// severity and verdict trail as properties, and a partial fingerprint that
// stays the same while the file, risk type and description do. Findings below
// the threshold are not results: the run's "belowThreshold" property lists
// them with the reason each was held back (as the JSON's
// below_threshold_reason); dropped ones are not included. Confidences are
// rounded to three decimals. Output is indented and deterministic.
func SARIF(r *Report) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("encode sarif: nil report")
	}
	if err := checkFinite(r); err != nil {
		return nil, fmt.Errorf("encode sarif for review %s: %w", r.ReviewID, err)
	}
	log := sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{buildRun(r)}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(log); err != nil {
		return nil, fmt.Errorf("encode sarif for review %s: %w", r.ReviewID, err)
	}
	return buf.Bytes(), nil
}

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
	Properties  map[string]any    `json:"properties,omitempty"`
}

// sarifInvocation says whether the review ran to the end; each failed
// item (and a failed review's reason) is a notification.
type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications"`
}

type sarifNotification struct {
	Level   string       `json:"level"`
	Message sarifMessage `json:"message"`
}

// invocation describes the review's run: successful only when it is done
// and every item was reviewed.
func invocation(r *Report) sarifInvocation {
	inv := sarifInvocation{ExecutionSuccessful: r.Status != StatusFailed && len(r.FailedItems) == 0,
		ToolExecutionNotifications: []sarifNotification{}}
	if r.Status == StatusFailed {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications,
			sarifNotification{Level: "error", Message: sarifMessage{Text: "review failed: " + r.Error}})
		for _, it := range r.NotRun {
			text := fmt.Sprintf("%s item %s did not finish", it.Stage, it.ItemKey)
			if it.Error != "" {
				text += ": " + it.Error
			}
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications,
				sarifNotification{Level: "error", Message: sarifMessage{Text: text}})
		}
		if len(r.StagesNotRun) > 0 {
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
				Level: "error", Message: sarifMessage{Text: "stages never reached: " + strings.Join(r.StagesNotRun, ", ")}})
		}
	}
	for _, f := range r.FailedItems {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
			Level: "error", Message: sarifMessage{Text: fmt.Sprintf("%s item %s could not be reviewed: %s", f.Stage, f.ItemKey, f.Error)},
		})
	}
	return inv
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	Name             string       `json:"name"`
	ShortDescription sarifMessage `json:"shortDescription"`
	FullDescription  sarifMessage `json:"fullDescription"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          sarifProperties   `json:"properties"`
	Fixes               []sarifFix        `json:"fixes,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
	EndLine   int `json:"endLine"`
}

type sarifProperties struct {
	FindingID  int64        `json:"findingId"`
	Confidence float64      `json:"confidence"`
	Severity   string       `json:"severity"`
	Trail      []sarifTrail `json:"trail"`
	// StoppedAt and StagesNotRun: as in the JSON report, for a review
	// that failed before the finding went through every stage.
	StoppedAt    string   `json:"stoppedAt,omitempty"`
	StagesNotRun []string `json:"stagesNotRun,omitempty"`
}

type sarifTrail struct {
	Stage            string  `json:"stage"`
	Verdict          string  `json:"verdict"`
	ConfidenceBefore float64 `json:"confidenceBefore"`
	ConfidenceAfter  float64 `json:"confidenceAfter"`
}

func buildRun(r *Report) sarifRun {
	used := make(map[review.RiskType]bool)
	for _, f := range r.Findings {
		used[f.RiskType] = true
	}
	types := riskTypesInOrder(used)
	rules := make([]sarifRule, len(types))
	index := make(map[review.RiskType]int, len(types))
	for i, rt := range types {
		index[rt] = i
		rules[i] = ruleFor(rt)
	}

	version := r.ToolVersion
	if version == "" {
		version = "dev"
	}
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name:           "reviewfleet",
			InformationURI: toolInformationURI,
			Version:        version,
			Rules:          rules,
		}},
		Invocations: []sarifInvocation{invocation(r)},
		Results:     make([]sarifResult, 0, len(r.Findings)),
	}
	props := map[string]any{}
	for k, v := range map[string]string{"reviewId": r.ReviewID, "repo": r.Repo, "baseSha": r.BaseSHA, "headSha": r.HeadSHA} {
		if v != "" {
			props[k] = v
		}
	}
	if below := belowProperties(r); len(below) > 0 {
		props["belowThreshold"] = below
	}
	if len(props) > 0 {
		run.Properties = props
	}
	for _, f := range r.Findings {
		run.Results = append(run.Results, resultFor(f, index[f.RiskType]))
	}
	return run
}

// sarifBelow is a finding below the threshold in the run's properties:
// where it is, how confident the review ended, and why it is not a result.
type sarifBelow struct {
	FindingID    int64    `json:"findingId"`
	RuleID       string   `json:"ruleId"`
	URI          string   `json:"uri"`
	StartLine    int      `json:"startLine"`
	Confidence   float64  `json:"confidence"`
	Threshold    float64  `json:"threshold"`
	Stage        string   `json:"stage"`
	Kind         string   `json:"kind"`
	Reason       string   `json:"reason"`
	FailedChecks []string `json:"failedChecks"`
}

func belowProperties(r *Report) []sarifBelow {
	out := make([]sarifBelow, 0, len(r.BelowThreshold))
	for _, f := range r.BelowThreshold {
		why := whyNot(f, true, r.Threshold, nil)
		start, _ := lineRange(f.Finding)
		out = append(out, sarifBelow{
			FindingID: f.ID, RuleID: string(f.RiskType), URI: artifactURI(f.File), StartLine: max(start, 1),
			Confidence: round3(f.Confidence), Threshold: round3(why.Threshold),
			Stage: why.Stage, Kind: why.Kind, Reason: why.String(), FailedChecks: nonNil(why.FailedChecks),
		})
	}
	return out
}

func ruleFor(rt review.RiskType) sarifRule {
	t, ok := ruleText[rt]
	if !ok {
		t.name = "Risk_" + string(rt)
		t.short = fmt.Sprintf("%s risk", rt)
		t.full = fmt.Sprintf("Findings of risk type %q.", string(rt))
	}
	return sarifRule{
		ID:               string(rt),
		Name:             t.name,
		ShortDescription: sarifMessage{Text: t.short},
		FullDescription:  sarifMessage{Text: t.full},
	}
}

func resultFor(f Finding, ruleIndex int) sarifResult {
	start, end := lineRange(f.Finding)
	start = max(start, 1)
	end = max(end, start)

	text := strings.TrimSpace(f.Description)
	if text == "" {
		text = fmt.Sprintf("Possible %s issue.", f.RiskType)
	}
	if s := strings.TrimSpace(f.Suggestion); s != "" {
		text += "\n\nSuggestion: " + s
	}
	trail := orderedTrail(f.Trail)
	props := sarifProperties{
		FindingID:  f.ID,
		Confidence: round3(f.Confidence),
		Severity:   string(f.Severity),
		Trail:      make([]sarifTrail, len(trail)),
		StoppedAt:  f.StoppedAt, StagesNotRun: f.MissedStages,
	}
	if f.StoppedAt != "" {
		text = fmt.Sprintf("[review failed: stopped at %s] %s", f.StoppedAt, text)
	}
	for i, v := range trail {
		props.Trail[i] = sarifTrail{Stage: v.Stage, Verdict: v.Verdict, ConfidenceBefore: round3(v.ConfidenceBefore), ConfidenceAfter: round3(v.ConfidenceAfter)}
	}
	return sarifResult{
		RuleID:    string(f.RiskType),
		RuleIndex: ruleIndex,
		Level:     sarifLevel(f.Severity),
		Message:   sarifMessage{Text: text},
		Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
			ArtifactLocation: sarifArtifact{URI: artifactURI(f.File), URIBaseID: srcRoot},
			Region:           sarifRegion{StartLine: start, EndLine: end},
		}}},
		PartialFingerprints: map[string]string{fingerprintKey: Fingerprint(f.Finding)},
		Properties:          props,
		Fixes:               sarifFixes(f.Finding),
	}
}

// sarifLevel maps a severity to a SARIF level; unknown severities are
// warnings.
func sarifLevel(s review.Severity) string {
	switch s {
	case review.Critical, review.High:
		return "error"
	case review.Low, review.Info:
		return "note"
	}
	return "warning"
}

// artifactURI turns a repo-relative path into a relative URI reference,
// percent-encoding what a URI cannot hold (spaces, "#", "?", "%").
func artifactURI(file string) string {
	u := (&url.URL{Path: cleanPath(file)}).EscapedPath()
	// A colon in the first segment would read as a URI scheme.
	if first, _, _ := strings.Cut(u, "/"); strings.Contains(first, ":") {
		u = "./" + u
	}
	return u
}

// Fingerprint is a finding's stable identity across reviews and pushes:
// the one the pipeline stored (path, enclosing symbol, risk type and
// normalised claim; see package fingerprint), or for a finding stored
// without one the same hash with no symbol. Line numbers take no part, so
// it survives edits above the finding. SARIF's partial fingerprint and the
// comments posted on pull requests both use it.
func Fingerprint(f review.Finding) string {
	if f.Fingerprint != "" {
		return f.Fingerprint
	}
	return fingerprint.Of(cleanPath(f.File), "", string(f.RiskType), f.Description)
}
