package hub

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreFresh runs the package's go:generate commands into a
// temp dir and compares: the hub's ClusterRole in deploy/hub/rbac (from the
// reconcilers' rbac markers), and the ManagedClusterView CRD and deepcopy
// functions (from its types).
func TestGeneratedFilesAreFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("runs controller-gen; skipped under -short")
	}
	root := repositoryRoot()
	out := t.TempDir()
	for _, args := range [][]string{
		{"rbac:roleName=baton-hub", "paths=./controllers/hub", "output:rbac:artifacts:config=" + filepath.Join(out, "rbac")},
		{"object", "crd", "paths=./controllers/hub/view/v1beta1", "output:crd:artifacts:config=" + filepath.Join(out, "crds"),
			"output:object:dir=" + filepath.Join(out, "deepcopy")},
	} {
		cmd := exec.Command("go", append([]string{"tool", "controller-gen"}, args...)...)
		cmd.Dir = root
		if output, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("controller-gen %v: %v\n%s", args, err, output)
		}
	}
	for committed, generated := range map[string]string{
		"deploy/hub/rbac/role.yaml": "rbac/role.yaml",
		"controllers/hub/testdata/crds/view.open-cluster-management.io_managedclusterviews.yaml": "crds/view.open-cluster-management.io_managedclusterviews.yaml",
		"controllers/hub/view/v1beta1/zz_generated.deepcopy.go":                                  "deepcopy/zz_generated.deepcopy.go",
	} {
		want, err := os.ReadFile(filepath.Join(root, committed))
		if err != nil {
			t.Errorf("%v; run go generate ./controllers/hub/...", err)
			continue
		}
		got, err := os.ReadFile(filepath.Join(out, generated))
		if err != nil {
			t.Errorf("controller-gen wrote no %s: %v", generated, err)
			continue
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s is stale; run go generate ./controllers/hub/...", committed)
		}
	}
}
