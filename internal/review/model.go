package review

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// ReviewStatus is where a review stands. The values are stored in
// Postgres.
type ReviewStatus string

// Review statuses.
const (
	ReviewQueued  ReviewStatus = "queued"
	ReviewRunning ReviewStatus = "running"
	ReviewDone    ReviewStatus = "done"
	ReviewFailed  ReviewStatus = "failed"
)

// ReviewStatuses lists every review status in lifecycle order.
var ReviewStatuses = []ReviewStatus{ReviewQueued, ReviewRunning, ReviewDone, ReviewFailed}

// Kind says who waits for a review. The values are stored in Postgres.
type Kind string

// Review kinds: admission and the queues prefer interactive reviews.
const (
	KindInteractive Kind = "interactive"
	KindBulk        Kind = "bulk" // part of a batch
)

// Source is where a review's change came from, and so where a worker
// finds its head tree. The values are stored in Postgres.
type Source string

// Review sources.
const (
	SourceGit  Source = "git"  // a local repository
	SourceDiff Source = "diff" // a diff alone, perhaps with a work tree (Snapshot)
	SourceURL  Source = "url"  // a remote repository, cloned
)

// Review is one review of a change.
type Review struct {
	ID       string
	BatchID  string
	Repo     string
	Source   Source
	BaseRef  string
	HeadRef  string
	BaseSHA  string
	HeadSHA  string
	Snapshot string
	// SnapshotFallback says why a worker gave the expert only the changed
	// files stored with the review instead of the whole head tree (empty
	// when it did not fall back).
	SnapshotFallback string
	Purpose          string
	Status           ReviewStatus
	Stage            Stage
	IntentMode       string
	SkippedStages    []string
	Config           json.RawMessage
	Error            string
	LLMCalls         int
	TokensIn         int64
	TokensOut        int64
	CreatedAt        time.Time
	StartedAt        *time.Time
	FinishedAt       *time.Time
	// Incomplete marks a done review some of whose items failed;
	// FailedItems counts them (for done and failed reviews alike).
	Incomplete  bool
	FailedItems int
	// SkippedBudget counts items skipped because the review's LLM budget
	// was spent (they also make a done review incomplete).
	SkippedBudget int
	// Cost is the estimated cost in US dollars of the review's calls, from
	// llm.prices; tokens and cost are added once per closed item.
	Cost       float64
	DeadlineAt time.Time
	Kind       Kind
	DedupeKey  string
}

// File is one file of a review's change.
type File struct {
	Path         string
	OldPath      string
	Change       string
	Binary       bool
	SkipReason   string // empty when the file is reviewed
	Additions    int
	Deletions    int
	ChangedLines []int
	Diff         string
	Content      *string // head-side content; nil when absent or not stored
	Packs        []string
	// Rules is what the repository's .reviewfleet.yaml files say for the file.
	Rules Rules
}

// FileSummary is one file of a change without its diff or content.
type FileSummary struct {
	Path, OldPath, Change, SkipReason string
	Additions, Deletions              int
}

// ItemStatus is where an item of the ledger stands. The values are stored
// in Postgres.
type ItemStatus string

// Item statuses.
const (
	ItemPending ItemStatus = "pending"
	ItemDone    ItemStatus = "done"
	ItemFailed  ItemStatus = "failed"
	// ItemSkippedBudget: the review's LLM budget was spent before the
	// item could be reviewed.
	ItemSkippedBudget ItemStatus = "skipped_budget"
)

// ItemStatuses lists every item status.
var ItemStatuses = []ItemStatus{ItemPending, ItemDone, ItemFailed, ItemSkippedBudget}

// Item is one entry of the fan-out/fan-in ledger.
type Item struct {
	ReviewID string
	Stage    Stage
	Key      string
	Status   ItemStatus
	Payload  json.RawMessage
	Attempts int
	// Claims counts the runs that took the item up, those an outage,
	// a shutdown or a rescue took back included (GetItem only).
	Claims int
	Error  string
	// Bulk: the item's review belongs to a batch (its tasks use the bulk
	// queues). Set by PendingPage.
	Bulk bool
	// Generation counts how often the item was handed to another worker
	// after its worker died; a task of an older generation is stale.
	Generation int
	// WorkerID is the worker that last started the item ("" when none).
	WorkerID string
}

// NewReview is everything a new review is created with: the review, its
// files and its first stage's ledger rows.
type NewReview struct {
	ID            string // generated when empty
	BatchID       string
	Repo          string
	Source        Source
	BaseRef       string
	HeadRef       string
	BaseSHA       string
	HeadSHA       string
	Snapshot      string
	Purpose       string
	IntentMode    string
	SkippedStages []string
	Config        json.RawMessage
	Timeout       time.Duration
	// Queued stores the review as queued: it starts (and its deadline
	// starts counting) when admission admits it. Otherwise it is running
	// at once.
	Queued    bool
	Kind      Kind // KindInteractive when empty
	DedupeKey string
	Files     []File
	// Items are the first stage's ledger rows (intent, one per file or chunk).
	Items []Item
	// Incremental, when set, links the review to an earlier one and says
	// which files it does not review again.
	Incremental Incremental
	// ConfigWarnings lists the repository's invalid .reviewfleet.yaml files.
	ConfigWarnings []ConfigWarning
}

// Incremental is what makes a review incremental: the earlier review it
// builds on, the result key of each of its reviewed files, and the files
// whose key matched the earlier review's (their findings, verdicts and
// expert runs are copied instead of reviewed again).
type Incremental struct {
	// ChangeKey names the change line (for example a pull request); the
	// next review of the same repository and change line finds this one.
	ChangeKey string
	// Since is the earlier review ("" when none).
	Since string
	// FileKeys maps each reviewed file to its result key.
	FileKeys map[string]string
	// Carried lists the files whose findings come from Since.
	Carried []string
}

// Rules is what a repository's .reviewfleet.yaml files say for one file
// (see internal/repoconfig, which works them out).
type Rules struct {
	Instructions      string             `json:"instructions,omitempty"`
	Thresholds        map[string]float64 `json:"thresholds,omitempty"`
	DisabledRiskTypes []string           `json:"disabled_risk_types,omitempty"`
}

// Disabled reports whether risk is disabled for the file.
func (r Rules) Disabled(risk RiskType) bool {
	return slices.Contains(r.DisabledRiskTypes, string(risk))
}

// ConfigWarning reports an invalid repository configuration file.
type ConfigWarning struct {
	File    string `json:"file"`
	Line    int    `json:"line"` // 0 when unknown
	Message string `json:"message"`
}

func (w ConfigWarning) String() string {
	if w.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", w.File, w.Line, w.Message)
	}
	return w.File + ": " + w.Message
}
