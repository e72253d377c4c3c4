package feedback

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v84/github"
)

// threadsQuery reads whether each review thread of a pull request is
// resolved, by whom, and the first comment that opened it. Only GraphQL
// offers thread resolution.
const threadsQuery = `query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { isResolved resolvedBy { login } comments(first: 1) { nodes { databaseId } } }
      }
    }
  }
}`

type threadsAnswer struct {
	Data struct {
		Repository *struct {
			PullRequest *struct {
				ReviewThreads struct {
					PageInfo struct {
						HasNextPage bool   `json:"hasNextPage"`
						EndCursor   string `json:"endCursor"`
					} `json:"pageInfo"`
					Nodes []struct {
						IsResolved bool `json:"isResolved"`
						ResolvedBy *struct {
							Login string `json:"login"`
						} `json:"resolvedBy"`
						Comments struct {
							Nodes []struct {
								DatabaseID int64 `json:"databaseId"`
							} `json:"nodes"`
						} `json:"comments"`
					} `json:"nodes"`
				} `json:"reviewThreads"`
			} `json:"pullRequest"`
		} `json:"repository"`
	} `json:"data"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

// maxThreadPages bounds the thread pages read per pull request.
const maxThreadPages = 10

// graphqlURL is the GraphQL endpoint beside a REST base: api.github.com's
// /graphql, an Enterprise host's /api/graphql.
func graphqlURL(rest string) string {
	if base, ok := strings.CutSuffix(rest, "/api/v3/"); ok {
		return base + "/api/graphql"
	}
	return rest + "graphql"
}

// resolvedThreads returns, by the id of the comment that opened it, who
// resolved each resolved review thread of the pull request.
func resolvedThreads(ctx context.Context, gc *github.Client, owner, repo string, number int) (map[int64]string, error) {
	out := map[int64]string{}
	after := ""
	for range maxThreadPages {
		vars := map[string]any{"owner": owner, "name": repo, "number": number}
		if after != "" {
			vars["after"] = after
		}
		req, err := gc.NewRequest("POST", graphqlURL(gc.BaseURL.String()), map[string]any{"query": threadsQuery, "variables": vars})
		if err != nil {
			return nil, err
		}
		var ans threadsAnswer
		if _, err := gc.Do(ctx, req, &ans); err != nil {
			return nil, fmt.Errorf("read the review threads of %s/%s#%d: %w", owner, repo, number, err)
		}
		if len(ans.Errors) > 0 {
			return nil, fmt.Errorf("read the review threads of %s/%s#%d: %s", owner, repo, number, ans.Errors[0].Message)
		}
		if ans.Data.Repository == nil || ans.Data.Repository.PullRequest == nil {
			return out, nil
		}
		threads := ans.Data.Repository.PullRequest.ReviewThreads
		for _, n := range threads.Nodes {
			if !n.IsResolved || len(n.Comments.Nodes) == 0 {
				continue
			}
			by := ""
			if n.ResolvedBy != nil {
				by = n.ResolvedBy.Login
			}
			out[n.Comments.Nodes[0].DatabaseID] = by
		}
		if !threads.PageInfo.HasNextPage {
			return out, nil
		}
		after = threads.PageInfo.EndCursor
	}
	return out, nil
}
