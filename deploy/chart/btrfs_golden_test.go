package chart_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"sigs.k8s.io/yaml"
)

// update rewrites the golden renders from the chart as it is: only when the
// change to them is meant (say so in the commit).
var update = flag.Bool("update", false, "rewrite testdata/*.golden.yaml from the chart")

// TestTheBtrfsRenderIsUnchanged: the real bed's btrfs site renders exactly
// the objects and hooks it rendered before zfs-drbd mode's values landed
// (testdata/btrfs.golden.yaml was written by the chart before that change),
// so what runs on this host is untouched by the mode it cannot run.
func TestTheBtrfsRenderIsUnchanged(t *testing.T) {
	r := render(t, btrfsValues(t))
	var got bytes.Buffer
	for _, o := range append(r.Objects, r.Hooks...) {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		got.WriteString("---\n")
		got.Write(data)
	}
	golden := filepath.Join("testdata", "btrfs.golden.yaml")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./deploy/chart -run TestTheBtrfsRenderIsUnchanged -update writes it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("the btrfs render differs from %s:\n%s", golden, firstDifference(got.Bytes(), want))
	}
}

// firstDifference is the first differing line of two renders, with its
// number, for a failure a person can read.
func firstDifference(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl []byte
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if !bytes.Equal(gl, wl) {
			return "line " + strconv.Itoa(i+1) + ":\n got " + string(gl) + "\nwant " + string(wl)
		}
	}
	return "(same lines)"
}
