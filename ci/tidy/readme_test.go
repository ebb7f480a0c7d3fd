package tidy

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func repositoryFile(t *testing.T, name string) string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The README promises only what is there: every path its layout table names
// exists, every make target it names is one, and it names every package the
// tests install (ci/packages.sh) -- it once said "Both need only Go 1.26"
// and promised image build files under deploy/ that were elsewhere.
func TestTheREADMEPromisesWhatIsThere(t *testing.T) {
	readme := repositoryFile(t, "README.md")
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(self), "..", "..")
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|(.*)\\|$").FindAllStringSubmatch(readme, -1) {
		paths := []string{m[1]}
		for _, p := range regexp.MustCompile("`([a-z][a-z0-9_./-]+/[a-z0-9_./-]*)`").FindAllStringSubmatch(m[2], -1) {
			paths = append(paths, p[1])
		}
		for _, p := range paths {
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("the layout row of %s names %s: %v", m[1], p, err)
			}
		}
	}
	makefile := repositoryFile(t, "Makefile")
	for _, m := range regexp.MustCompile("`make ([a-z-]+)").FindAllStringSubmatch(readme, -1) {
		if !regexp.MustCompile("(?m)^" + regexp.QuoteMeta(m[1]) + ":").MatchString(makefile) {
			t.Errorf("the README names make %s, which the Makefile lacks", m[1])
		}
	}
	pairs := regexp.MustCompile(`(?s)\npairs=\(([^)]*)\)`).FindStringSubmatch(repositoryFile(t, "ci/packages.sh"))
	if pairs == nil {
		t.Fatal("ci/packages.sh lists no pairs=(command:package ...)")
	}
	for _, m := range regexp.MustCompile(`[a-z0-9.]+:([a-z0-9-]+)`).FindAllStringSubmatch(pairs[1], -1) {
		if pkg := m[1]; pkg != "make" && pkg != "git" && pkg != "mount" && !strings.Contains(readme, pkg) {
			t.Errorf("the tests install %s (ci/packages.sh), which the README does not name", pkg)
		}
	}
	if !strings.Contains(makefile, "bash ci/packages.sh") {
		t.Error("make test does not run ci/packages.sh")
	}
}
