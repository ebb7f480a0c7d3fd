// Package chart is baton's Helm chart (the baton/ directory beside this file,
// embedded) and the Go side of it: the chart's values as a typed struct,
// Render (the objects the chart makes, through Helm's own install action in
// client-only dry-run mode), and Install, Upgrade, Apply and Uninstall into a
// cluster through Helm's Go API. The real bed installs baton with it; people
// install the same chart with the helm command (docs/deploy.md).
//
// baton/crds and baton/files are generated: `make crds` copies baton's CRDs
// and the operator's controller-gen role into them, and csi-addons' CRDs and
// controller-manager role from its module.
package chart

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

//go:embed all:baton
var files embed.FS

// Name is the chart's name (baton/Chart.yaml).
const Name = "baton"

// Load returns the embedded chart, freshly parsed: a caller may change it.
func Load() (*helmchart.Chart, error) {
	var buffered []*loader.BufferedFile
	err := fs.WalkDir(files, Name, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		rel, _ := strings.CutPrefix(name, Name+"/") // the walk starts there
		buffered = append(buffered, &loader.BufferedFile{Name: rel, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("failed to read the embedded chart: %w", err)
	}
	c, err := loader.LoadFiles(buffered)
	if err != nil {
		return nil, fmt.Errorf("failed to load the embedded chart: %w", err)
	}
	return c, nil
}
