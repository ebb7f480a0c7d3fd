package v1alpha1_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestManifestsAreFresh runs `make crds` into a temp dir and compares what it
// generates with what is committed: the CRDs in deploy/crds, the deepcopy
// functions beside the types, the role in deploy/rbac once RBAC_PATHS turns
// its generation on, and what the Helm chart carries of them and of
// csi-addons (deploy/chart/baton/crds and files). Running the Makefile's own target (not a copy of its
// arguments) is what makes a pass mean "make crds would change nothing".
func TestManifestsAreFresh(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is needed to run the crds target (CI installs it): ", err)
	}
	root := repositoryRoot()
	out := t.TempDir()
	cmd := exec.Command("make", "--no-print-directory", "-s", "crds",
		"CRD_DIR="+filepath.Join(out, "crds"),
		"RBAC_DIR="+filepath.Join(out, "rbac"),
		"DEEPCOPY_DIR="+filepath.Join(out, "deepcopy"),
		"CHART_DIR="+filepath.Join(out, "chart"))
	cmd.Dir = root
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make crds: %v\n%s", err, output)
	}
	compareTrees(t, filepath.Join(root, "deploy", "crds"), filepath.Join(out, "crds"))
	compareTrees(t, filepath.Join(root, "deploy", "rbac"), filepath.Join(out, "rbac"))
	for _, dir := range []string{"crds", "files"} {
		compareTrees(t, filepath.Join(root, "deploy", "chart", "baton", dir), filepath.Join(out, "chart", dir))
	}
	compareFiles(t, filepath.Join(root, "api", "v1alpha1", "zz_generated.deepcopy.go"),
		filepath.Join(out, "deepcopy", "zz_generated.deepcopy.go"))
}

// compareTrees reports every file that is committed but not generated, generated
// but not committed, or different. A missing directory counts as empty.
func compareTrees(t *testing.T, committed, generated string) {
	t.Helper()
	want, got := listFiles(t, committed), listFiles(t, generated)
	for _, name := range want {
		if !slices.Contains(got, name) {
			t.Errorf("%s is committed but make crds no longer generates it; run make crds", filepath.Join(committed, name))
		}
	}
	for _, name := range got {
		if !slices.Contains(want, name) {
			t.Errorf("make crds generates %s, which is not committed; run make crds", filepath.Join(committed, name))
			continue
		}
		compareFiles(t, filepath.Join(committed, name), filepath.Join(generated, name))
	}
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		names = append(names, rel)
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func compareFiles(t *testing.T, committed, generated string) {
	t.Helper()
	want, err := os.ReadFile(committed)
	if err != nil {
		t.Errorf("%v; run make crds", err)
		return
	}
	got, err := os.ReadFile(generated)
	if err != nil {
		t.Errorf("make crds generated no %s: %v", filepath.Base(generated), err)
		return
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s is stale (first difference at line %d); run make crds", committed, firstDifferentLine(want, got))
	}
}

func firstDifferentLine(a, b []byte) int {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}
