package mutants

import (
	"strings"
	"testing"
)

const source = `package p

func f(a, b int, ok bool) int {
	if a < b && ok {
		return a - b
	}
	for i := 0; i < a; i++ {
		if i == b {
			break
		}
		a += -b
	}
	return a
}
`

// position is the line and column of the n-th (from 0) occurrence of needle
// in source.
func position(t *testing.T, needle string, n int) (int, int) {
	t.Helper()
	offset := -1
	for range n + 1 {
		next := strings.Index(source[offset+1:], needle)
		if next < 0 {
			t.Fatalf("%q occurs fewer than %d times", needle, n+1)
		}
		offset += 1 + next
	}
	line := strings.Count(source[:offset], "\n") + 1
	return line, offset - strings.LastIndex(source[:offset], "\n")
}

func TestApplySwapsTheOperatorAndNothingElse(t *testing.T) {
	for _, c := range []struct {
		needle string
		nth    int
		typ    string
		want   string
	}{
		{"<", 0, "CONDITIONALS_BOUNDARY", "if a <= b && ok {"},
		{"<", 0, "CONDITIONALS_NEGATION", "if a >= b && ok {"},
		{"&&", 0, "INVERT_LOGICAL", "if a < b || ok {"},
		{"-", 0, "ARITHMETIC_BASE", "return a + b"},
		{"++", 0, "INCREMENT_DECREMENT", "for i := 0; i < a; i-- {"},
		{"==", 0, "CONDITIONALS_NEGATION", "if i != b {"},
		{"break", 0, "INVERT_LOOPCTRL", "continue"},
		{"+=", 0, "INVERT_ASSIGNMENTS", "a -= -b"},
		{"-b", 0, "INVERT_NEGATIVES", "a += +b"},
	} {
		line, column := position(t, c.needle, c.nth)
		out, m, err := Apply([]byte(source), Mutant{File: "p.go", Line: line, Column: column, Type: c.typ})
		if err != nil {
			t.Fatalf("%s at %d:%d: %v", c.typ, line, column, err)
		}
		got := strings.Split(string(out), "\n")[line-1]
		if strings.TrimSpace(got) != c.want {
			t.Errorf("%s at %d:%d: line reads %q, want %q", c.typ, line, column, strings.TrimSpace(got), c.want)
		}
		if m.From == "" || m.To == "" || m.From == m.To {
			t.Errorf("%s: the mutant says %q -> %q", c.typ, m.From, m.To)
		}
		// Every other line is the original's, so file:line in a report is
		// the line in the real file.
		orig, mutated := strings.Split(source, "\n"), strings.Split(string(out), "\n")
		for i := range orig {
			if i != line-1 && orig[i] != mutated[i] {
				t.Errorf("%s: line %d changed too: %q", c.typ, i+1, mutated[i])
			}
		}
	}
}

// A position that no longer holds the operator gremlins saw (the file moved
// on) must be refused, not mutate whatever is there now.
func TestApplyRefusesAPlaceWithoutTheOperator(t *testing.T) {
	line, column := position(t, "<", 0)
	for _, m := range []Mutant{
		{Line: line, Column: column + 1, Type: "CONDITIONALS_BOUNDARY"}, // inside no token
		{Line: line, Column: column - 2, Type: "CONDITIONALS_BOUNDARY"}, // the identifier a
		{Line: line, Column: column, Type: "INVERT_LOGICAL"},            // < is no && or ||
		{Line: line, Column: column, Type: "NO_SUCH_KIND"},
		{Line: 99, Column: 1, Type: "CONDITIONALS_BOUNDARY"},
	} {
		m.File = "p.go"
		if _, _, err := Apply([]byte(source), m); err == nil {
			t.Errorf("%s: applied", m.ID())
		}
	}
}

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]string{
		"storage/core":                  "storage/core",
		"./storage/chain/":              "storage/chain",
		"csi:resolve.go,replication.go": "csi:resolve.go,replication.go",
	} {
		got, err := ParseTarget(in)
		if err != nil || got.String() != want {
			t.Errorf("ParseTarget(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "./...", "/abs/dir", "csi:", "csi:a/b.go", "csi:a.go,,b.go"} {
		if _, err := ParseTarget(bad); err == nil {
			t.Errorf("ParseTarget(%q) accepted", bad)
		}
	}
}
