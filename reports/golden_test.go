package reports_test

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/reports/reportstest"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata/ from the current output")

// TestGolden pins junit.xml and results.json of the sample run byte for
// byte: a change to either format shows up as a diff to review, and
// `go test ./reports -run TestGolden -rewrite` accepts it.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		file  string
		write func(io.Writer, reports.Run) error
	}{
		{"sample.junit.xml", reports.WriteJUnit},
		{"sample.results.json", reports.WriteJSON},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var got bytes.Buffer
			if err := tc.write(&got, reportstest.SampleRun()); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.file)
			if *rewrite {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -rewrite to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s differs from the golden file; first difference near byte %d:\n got: %q\nwant: %q\n(rerun with -rewrite if the change is intended)",
					tc.file, firstDifference(got.Bytes(), want), excerpt(got.Bytes(), want), excerpt(want, got.Bytes()))
			}
		})
	}
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// excerpt shows a's bytes around its first difference from b.
func excerpt(a, b []byte) string {
	at := firstDifference(a, b)
	return string(a[max(0, at-60):min(len(a), at+60)])
}
