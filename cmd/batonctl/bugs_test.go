package main

import (
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/internal/bugs"
)

// TestBugsListNamesEveryBugWithItsSeedSentence: the catalogue as printed
// is the catalogue as compiled.
func TestBugsListNamesEveryBugWithItsSeedSentence(t *testing.T) {
	out, err := runBatonctl(t, time.Now(), "bugs", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bugs.Catalogue() {
		for _, want := range []string{string(b.Name) + " (" + b.Rule + ")", b.Sentence, b.Where, strings.Join(b.Scenarios, " ")} {
			if !strings.Contains(out, want) {
				t.Errorf("bugs list lacks %q", want)
			}
		}
	}
}

// TestAMatrixRefusesWhatItCannotRun: an unknown bug and a bed that could
// switch none on are errors naming them, before anything runs.
func TestAMatrixRefusesWhatItCannotRun(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bugs", "demote-end,demote-the-world"}, `no seeded bug "demote-the-world"`},
		{[]string{"--bed", "real"}, "--bed real: not yet"},
		{[]string{"--bed", "kind"}, `--bed "kind"`},
	} {
		_, err := runBatonctl(t, time.Now(), append([]string{"bugs", "matrix"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("bugs matrix %v: %v, want an error with %q", c.args, err, c.want)
		}
	}
}
