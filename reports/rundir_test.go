package reports_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/reports/reportstest"
)

func TestWriteRunDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs", "2026-11-30")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, reports.HTMLName), []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := reportstest.SampleRun()
	if err := reports.WriteRunDir(dir, run); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, entry := range entries {
		names = append(names, entry.Name())
	}
	if want := []string{reports.JUnitName, reports.HTMLName, reports.JSONName}; !slices.Equal(names, want) {
		t.Errorf("the directory holds %v, want exactly %v (no temporary files)", names, want)
	}
	for _, w := range []struct {
		name  string
		write func(t testing.TB) string
	}{
		{reports.JUnitName, func(t testing.TB) string { return render(t, reports.WriteJUnit, run) }},
		{reports.JSONName, func(t testing.TB) string { return render(t, reports.WriteJSON, run) }},
		{reports.HTMLName, func(t testing.TB) string { return render(t, reports.WriteHTML, run) }},
	} {
		written, err := os.ReadFile(filepath.Join(dir, w.name))
		if err != nil {
			t.Fatal(err)
		}
		if string(written) != w.write(t) {
			t.Errorf("%s differs from what its writer renders", w.name)
		}
		if info, err := os.Stat(filepath.Join(dir, w.name)); err != nil || info.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, %v; want 0644", w.name, info.Mode(), err)
		}
	}
}

func TestWriteRunDirRefusesAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteRunDir(file, reportstest.SampleRun()); err == nil {
		t.Error("writing a run directory over a file succeeded")
	}
}
