package chart

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The release's defaults.
const (
	DefaultNamespace   = "baton-system"
	DefaultReleaseName = "baton"
	// KubeVersion is the Kubernetes version Render assumes (the beds' and the
	// test control plane's).
	KubeVersion = "v1.37.2"
)

// Release names a release of the chart.
type Release struct {
	Name      string // default DefaultReleaseName
	Namespace string // default DefaultNamespace
}

func (r Release) withDefaults() Release {
	if r.Name == "" {
		r.Name = DefaultReleaseName
	}
	if r.Namespace == "" {
		r.Namespace = DefaultNamespace
	}
	return r
}

// Rendered is what the chart makes of some values.
type Rendered struct {
	// CRDs are the chart's crds/: installed before everything else, never
	// deleted by an uninstall.
	CRDs []*unstructured.Unstructured
	// Objects are the release's objects, in the order the templates render.
	Objects []*unstructured.Unstructured
	// Hooks are the hook objects (the zfs-drbd pre-install check's pods).
	Hooks []*unstructured.Unstructured
	// Notes is the chart's NOTES.txt, rendered.
	Notes string
}

// Render renders the chart as an install would, through Helm's install
// action in client-only dry-run mode (what `helm template` does): no cluster.
func Render(ctx context.Context, values Values, release Release) (Rendered, error) {
	if err := values.Validate(); err != nil {
		return Rendered{}, err
	}
	return RenderUnchecked(ctx, values, release)
}

// RenderUnchecked renders without Validate: the chart's own checks only, as
// the helm command would meet them.
func RenderUnchecked(ctx context.Context, values Values, release Release) (Rendered, error) {
	release = release.withDefaults()
	c, err := Load()
	if err != nil {
		return Rendered{}, err
	}
	vals, err := values.Map()
	if err != nil {
		return Rendered{}, err
	}
	kubeVersion, err := chartutil.ParseKubeVersion(KubeVersion)
	if err != nil {
		return Rendered{}, err
	}
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.DryRun, install.ClientOnly, install.Replace = true, true, true
	install.ReleaseName, install.Namespace, install.KubeVersion = release.Name, release.Namespace, kubeVersion
	rel, err := install.RunWithContext(ctx, c, vals)
	if err != nil {
		return Rendered{}, fmt.Errorf("failed to render the chart: %w", err)
	}
	var out Rendered
	for _, crd := range c.CRDObjects() {
		objects, err := decode(crd.File.Data)
		if err != nil {
			return Rendered{}, fmt.Errorf("%s: %w", crd.Filename, err)
		}
		out.CRDs = append(out.CRDs, objects...)
	}
	if out.Objects, err = decode([]byte(rel.Manifest)); err != nil {
		return Rendered{}, fmt.Errorf("the rendered manifest: %w", err)
	}
	for _, hook := range rel.Hooks {
		objects, err := decode([]byte(hook.Manifest))
		if err != nil {
			return Rendered{}, fmt.Errorf("hook %s: %w", hook.Path, err)
		}
		out.Hooks = append(out.Hooks, objects...)
	}
	out.Notes = rel.Info.Notes
	return out, nil
}

// decode splits a YAML stream into objects, skipping empty documents.
func decode(data []byte) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var object map[string]any
		err := decoder.Decode(&object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(object) > 0 {
			out = append(out, &unstructured.Unstructured{Object: object})
		}
	}
}
