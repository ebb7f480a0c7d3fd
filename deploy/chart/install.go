package chart

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	helmchart "helm.sh/helm/v3/pkg/chart"
	helmrelease "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Target is the cluster and release Install, Upgrade, Apply and Uninstall act
// on.
type Target struct {
	// Config reaches the cluster (FromKubeconfig reads one from a file).
	Config *rest.Config
	// Release names the release; its namespace is made if missing.
	Release Release
	// Wait waits until the Deployments and the DaemonSet are ready, within
	// Timeout. Hooks (the zfs-drbd check) are waited for in any case.
	Wait bool
	// Timeout bounds Wait and the hooks; zero is 5 minutes.
	Timeout time.Duration
	// Log receives Helm's progress; nil discards it.
	Log func(format string, args ...any)
}

// FromKubeconfig reads a kubeconfig file; context "" is its current one.
func FromKubeconfig(path, context string) (*rest.Config, error) {
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("failed to read the kubeconfig %s: %w", path, err)
	}
	return config, nil
}

// FieldManager owns what the chart's Go side applies itself: the CRDs.
const FieldManager = "baton-chart"

func (t Target) timeout() time.Duration {
	if t.Timeout <= 0 {
		return 5 * time.Minute
	}
	return t.Timeout
}

// configuration is Helm's view of the target.
func (t Target) configuration() (*action.Configuration, error) {
	if t.Config == nil {
		return nil, errors.New("the target has no rest.Config")
	}
	logf := t.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	cfg := new(action.Configuration)
	if err := cfg.Init(newGetter(t.Config, t.Release.withDefaults().Namespace), t.Release.withDefaults().Namespace, "secret", logf); err != nil {
		return nil, fmt.Errorf("failed to set up Helm: %w", err)
	}
	return cfg, nil
}

// Install installs the chart as a new release: the CRDs first (applied, see
// ApplyCRDs), then the release. It fails if the release exists.
func Install(ctx context.Context, t Target, values Values) (*helmrelease.Release, error) {
	p, err := prepare(ctx, t, values)
	if err != nil {
		return nil, err
	}
	install := action.NewInstall(p.cfg)
	install.ReleaseName, install.Namespace, install.CreateNamespace = p.release.Name, p.release.Namespace, true
	install.SkipCRDs = true // applied by prepare, as an upgrade applies them
	install.Wait, install.Timeout = t.Wait, t.timeout()
	rel, err := install.RunWithContext(ctx, p.chart, p.values)
	if err != nil {
		return nil, explain(ctx, t, fmt.Errorf("failed to install %s into %s: %w", p.release.Name, p.release.Namespace, err))
	}
	return rel, nil
}

// Upgrade upgrades the release to the embedded chart and these values. Helm
// never upgrades a chart's CRDs; Upgrade applies them first.
func Upgrade(ctx context.Context, t Target, values Values) (*helmrelease.Release, error) {
	p, err := prepare(ctx, t, values)
	if err != nil {
		return nil, err
	}
	upgrade := action.NewUpgrade(p.cfg)
	upgrade.Namespace, upgrade.SkipCRDs = p.release.Namespace, true
	upgrade.Wait, upgrade.Timeout = t.Wait, t.timeout()
	rel, err := upgrade.RunWithContext(ctx, p.release.Name, p.chart, p.values)
	if err != nil {
		return nil, explain(ctx, t, fmt.Errorf("failed to upgrade %s in %s: %w", p.release.Name, p.release.Namespace, err))
	}
	return rel, nil
}

// Apply installs the release, or upgrades it when it exists: what a bed that
// may run twice calls.
func Apply(ctx context.Context, t Target, values Values) (*helmrelease.Release, error) {
	cfg, err := t.configuration()
	if err != nil {
		return nil, err
	}
	history := action.NewHistory(cfg)
	history.Max = 1
	_, err = history.Run(t.Release.withDefaults().Name)
	switch {
	case errors.Is(err, driver.ErrReleaseNotFound):
		return Install(ctx, t, values)
	case err != nil:
		return nil, fmt.Errorf("failed to read the release's history: %w", err)
	}
	return Upgrade(ctx, t, values)
}

// Uninstall deletes the release's objects and its history, waiting until
// they are gone within the timeout. The CRDs stay (deleting them would delete
// every volume record), and so does what the operator made: the CSI secret
// with the cluster's token, the storage objects, the node's pool.
func Uninstall(ctx context.Context, t Target) error {
	cfg, err := t.configuration()
	if err != nil {
		return err
	}
	uninstall := action.NewUninstall(cfg)
	uninstall.Wait, uninstall.Timeout = t.Wait, t.timeout()
	if _, err := uninstall.Run(t.Release.withDefaults().Name); err != nil {
		return fmt.Errorf("failed to uninstall %s: %w", t.Release.withDefaults().Name, err)
	}
	return nil
}

// prepared is what an install or an upgrade starts from.
type prepared struct {
	cfg     *action.Configuration
	chart   *helmchart.Chart
	values  map[string]any
	release Release
}

// prepare checks the values, loads the chart, sets Helm up and applies the
// chart's CRDs.
func prepare(ctx context.Context, t Target, values Values) (prepared, error) {
	if err := values.Validate(); err != nil {
		return prepared{}, err
	}
	p := prepared{release: t.Release.withDefaults()}
	var err error
	if p.chart, err = Load(); err != nil {
		return prepared{}, err
	}
	if p.values, err = values.Map(); err != nil {
		return prepared{}, err
	}
	if p.cfg, err = t.configuration(); err != nil {
		return prepared{}, err
	}
	return p, ApplyCRDs(ctx, t.Config, t.timeout())
}

// ApplyCRDs applies the chart's CRDs (server-side, field manager
// FieldManager) and waits until the API server has established each.
func ApplyCRDs(ctx context.Context, config *rest.Config, timeout time.Duration) error {
	c, err := Load()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	cl, err := client.New(config, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("failed to reach the cluster: %w", err)
	}
	var names []string
	for _, file := range c.CRDObjects() {
		objects, err := decode(file.File.Data)
		if err != nil {
			return fmt.Errorf("%s: %w", file.Filename, err)
		}
		for _, o := range objects {
			o.SetManagedFields(nil)
			if err := cl.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
				return fmt.Errorf("failed to apply the CRD %s: %w", o.GetName(), err)
			}
			names = append(names, o.GetName())
		}
	}
	return waitEstablished(ctx, cl, names, timeout)
}

func waitEstablished(ctx context.Context, cl client.Client, names []string, timeout time.Duration) error {
	var pending []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		pending = pending[:0]
		for _, name := range names {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := cl.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
				return false, err
			}
			if !apihelpers.IsCRDConditionTrue(&crd, apiextensionsv1.Established) {
				pending = append(pending, name)
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("the CRDs %s are not established: %w", strings.Join(pending, ", "), err)
	}
	return nil
}

// explain adds to a failed install or upgrade what the zfs-drbd check's pods
// said: which node lacks which kernel module.
func explain(ctx context.Context, t Target, err error) error {
	scheme := runtime.NewScheme()
	if clientgoscheme.AddToScheme(scheme) != nil {
		return err
	}
	cl, clientErr := client.New(t.Config, client.Options{Scheme: scheme})
	if clientErr != nil {
		return err
	}
	var pods corev1.PodList
	if cl.List(ctx, &pods, client.InNamespace(t.Release.withDefaults().Namespace),
		client.MatchingLabels{"app.kubernetes.io/component": "preflight"}) != nil {
		return err
	}
	var said []string
	for _, pod := range pods.Items {
		for _, s := range pod.Status.ContainerStatuses {
			if s.State.Terminated != nil && s.State.Terminated.ExitCode != 0 && s.State.Terminated.Message != "" {
				said = append(said, strings.TrimSpace(s.State.Terminated.Message))
			}
		}
	}
	if len(said) == 0 {
		return err
	}
	return fmt.Errorf("%w: %s", err, strings.Join(said, "; "))
}
