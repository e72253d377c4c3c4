package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/reviewfleet/reviewfleet/internal/agent"
	"github.com/reviewfleet/reviewfleet/internal/review"
	"github.com/reviewfleet/reviewfleet/store"
)

// toolOrder is the order tools are shown in; names the model invented
// follow, alphabetically.
var toolOrder = []string{"read_file", "grep", "find_symbol", "list_dir"}

// printExpertTools writes the tool health of a review's expert runs: the
// totals by tool and outcome, then one line per run. A search tool that
// only ever comes back empty is visible here at a glance.
func printExpertTools(ctx context.Context, st *store.Store, reviewID string, w io.Writer) error {
	runs, err := st.ListExpertRuns(ctx, reviewID)
	if err != nil || len(runs) == 0 {
		return err
	}
	findings, err := st.ListFindings(ctx, reviewID)
	if err != nil {
		return err
	}
	where := map[int64]string{}
	for _, f := range findings {
		where[f.ID] = fmt.Sprintf("%s:%d", f.File, f.LineStart)
	}
	ids := make([]int64, 0, len(runs))
	total := map[string]map[string]int{}
	for id, run := range runs {
		ids = append(ids, id)
		for tool, byOutcome := range toolCounts(run) {
			if total[tool] == nil {
				total[tool] = map[string]int{}
			}
			for o, n := range byOutcome {
				total[tool][o] += n
			}
		}
	}
	slices.Sort(ids)
	fmt.Fprintf(w, "expert  %d runs; tools: %s\n", len(runs), formatToolCounts(total))
	for _, id := range ids {
		run := runs[id]
		fmt.Fprintf(w, "  finding %d (%s) %s, %d rounds; tools: %s\n",
			id, firstNonEmpty(where[id], "?"), run.StopReason, run.Rounds, formatToolCounts(toolCounts(run)))
	}
	return nil
}

// toolCounts decodes a run's counts by tool and outcome (none for runs
// stored before they were recorded).
func toolCounts(run review.ExpertRun) map[string]map[string]int {
	var m map[string]map[string]int
	_ = json.Unmarshal(run.ToolOutcomes, &m)
	return m
}

// formatToolCounts writes counts as "grep 3 hit, 1 empty · read_file 2 hit",
// tools and outcomes in a fixed order; "none" when there are none.
func formatToolCounts(m map[string]map[string]int) string {
	tools := make([]string, 0, len(m))
	for t := range m {
		tools = append(tools, t)
	}
	rank := func(t string) int {
		if i := slices.Index(toolOrder, t); i >= 0 {
			return i
		}
		return len(toolOrder)
	}
	sort.Slice(tools, func(i, j int) bool {
		if ri, rj := rank(tools[i]), rank(tools[j]); ri != rj {
			return ri < rj
		}
		return tools[i] < tools[j]
	})
	var parts []string
	for _, t := range tools {
		var outs []string
		for _, o := range agent.ToolOutcomes {
			if n := m[t][string(o)]; n > 0 {
				outs = append(outs, fmt.Sprintf("%d %s", n, o))
			}
		}
		if len(outs) > 0 {
			parts = append(parts, t+" "+strings.Join(outs, ", "))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " · ")
}
