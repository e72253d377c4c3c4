package feedback

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/reviewfleet/reviewfleet/internal/repoconfig"
	"github.com/reviewfleet/reviewfleet/store"
)

// Export writes the enabled learnings as a .reviewfleet.yaml a team can
// review and commit: one instruction per dismissed finding. Nothing
// learned reaches a prompt until a person adopts it this way.
func Export(learnings []store.Learning) ([]byte, error) {
	var b strings.Builder
	b.WriteString("Findings this repository's reviewers dismissed on earlier pull requests; do not raise them again unless the code they cite has changed:\n")
	n := 0
	for _, l := range learnings {
		if l.Disabled {
			continue
		}
		n++
		fmt.Fprintf(&b, "- %s in %s: %q (dismissed %s)\n", l.RiskType, l.File, strings.Join(strings.Fields(l.Claim), " "), times(l.Dismissals))
	}
	if n == 0 {
		return nil, fmt.Errorf("every learning is disabled: nothing to export")
	}
	var out bytes.Buffer
	out.WriteString("# " + repoconfig.FileName + " — exported by `reviewfleet learnings export`; review before committing.\n")
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(repoconfig.File{Instructions: b.String()}); err != nil {
		return nil, fmt.Errorf("export learnings: %w", err)
	}
	if _, warns := repoconfig.Parse(repoconfig.FileName, out.Bytes()); len(warns) > 0 {
		return nil, fmt.Errorf("export learnings: the file written does not parse: %s", warns[0].Message)
	}
	return out.Bytes(), nil
}
