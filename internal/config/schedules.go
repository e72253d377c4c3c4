package config

import (
	"fmt"

	"github.com/robfig/cron/v3"
)

// validateSchedules checks every scheduled bulk review and returns one
// message per problem.
func validateSchedules(ss []Schedule) []string {
	var msgs []string
	seen := map[string]bool{}
	parser := cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	for i, s := range ss {
		where := fmt.Sprintf("entry %d", i+1)
		if s.Name != "" {
			where = fmt.Sprintf("%q", s.Name)
		}
		switch {
		case s.Name == "":
			msgs = append(msgs, where+": needs a name")
		case seen[s.Name]:
			msgs = append(msgs, where+": the name is used twice")
		}
		seen[s.Name] = true
		if _, err := parser.Parse(s.Cron); err != nil {
			msgs = append(msgs, fmt.Sprintf("%s: cron %q: %v", where, s.Cron, err))
		}
		if (s.Manifest == "") == (s.GitHubOrg == "") {
			msgs = append(msgs, where+": give exactly one of manifest and github_org")
		}
		if s.RepoFilter != "" && s.GitHubOrg == "" {
			msgs = append(msgs, where+": repo_filter only applies to github_org")
		}
	}
	return msgs
}
