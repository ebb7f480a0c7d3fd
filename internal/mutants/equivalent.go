package mutants

import (
	"fmt"
	"regexp"
	"strings"
)

// equivalentLine is one entry of docs/mutants.md's list of equivalent mutants:
//
//   - `storage/chain/ref.go:42:10 CONDITIONALS_BOUNDARY`: why no behaviour differs
var equivalentLine = regexp.MustCompile("^- `([^` ]+:[0-9]+:[0-9]+ [A-Z_]+)`:? *(.*)$")

// ParseEquivalents reads the equivalent mutants a document lists, by ID, with
// the reason each changes no behaviour. An entry without a reason is refused:
// the list is where a mutant is excused, and the excuse must be written.
func ParseEquivalents(doc string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(doc, "\n") {
		m := equivalentLine.FindStringSubmatch(strings.TrimRight(line, " "))
		if m == nil {
			continue
		}
		if strings.TrimSpace(m[2]) == "" {
			return nil, fmt.Errorf("line %d: the equivalent mutant %s says not why", i+1, m[1])
		}
		if _, dup := out[m[1]]; dup {
			return nil, fmt.Errorf("line %d: the equivalent mutant %s is listed twice", i+1, m[1])
		}
		out[m[1]] = strings.TrimSpace(m[2])
	}
	return out, nil
}
