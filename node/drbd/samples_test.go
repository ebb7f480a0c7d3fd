package drbd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The samples under testdata/events2 and testdata/show9 are DRBD 9 output
// in the formats drbd-utils prints, each file's leading '#' lines naming
// where its format comes from. No DRBD 9 module runs on the machines baton
// is tested on (Debian's kernels ship 8.4): they are the sources' formats,
// not captures of a real module. testdata/dump9 holds what drbdadm 9.22
// itself printed, run here on baton's DRBD 9 resource file.
func sample(t testing.TB, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return stripSourceComment(string(data))
}

// stripSourceComment drops a sample's leading '#' lines.
func stripSourceComment(text string) string {
	for strings.HasPrefix(text, "#") {
		_, text, _ = strings.Cut(text, "\n")
	}
	return text
}

func samples(t testing.TB, dir string) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", dir, "*.txt"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no samples in testdata/%s: %v", dir, err)
	}
	out := map[string]string{}
	for _, name := range names {
		out[filepath.Base(name)] = sample(t, dir, filepath.Base(name))
	}
	return out
}
