package ocm

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/controllers/hub"
	"github.com/baton-dr/baton/internal/poll"
)

// FieldManager owns what this package applies (server-side apply).
const FieldManager = "baton-realbed-ocm"

var scheme = newScheme()

// Scheme knows every kind this package reads and writes: Kubernetes',
// baton's, OCM's and ManagedClusterView.
func Scheme() *runtime.Scheme { return scheme }

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, hub.AddToScheme} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("the OCM bed's scheme: %v", err))
		}
	}
	return s
}

// Cluster is one of the bed's clusters as this package reaches it.
type Cluster struct {
	// Name is kind's name of the cluster (its node is <Name>-control-plane).
	Name string
	// Config is an admin config of its API server.
	Config *rest.Config
}

func (c Cluster) client() (client.Client, error) {
	config := rest.CopyConfig(c.Config)
	config.Timeout = 30 * time.Second
	cl, err := client.New(config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	return cl, nil
}

// apply applies the objects server-side, in order, as FieldManager, taking
// over fields another manager set (a re-run converges on what this package
// renders).
func apply(ctx context.Context, c client.Client, objects []*unstructured.Unstructured) error {
	for _, o := range objects {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("failed to apply %s %s: %w", o.GetKind(), key(o), err)
		}
	}
	return nil
}

func key(o client.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// applyCRDs applies CRDs and waits until each is Established.
func applyCRDs(ctx context.Context, c client.Client, crds []*unstructured.Unstructured) error {
	if err := apply(ctx, c, crds); err != nil {
		return err
	}
	for _, crd := range crds {
		err := poll.Until(ctx, time.Minute, func() (bool, string) {
			var got apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, client.ObjectKey{Name: crd.GetName()}, &got); err != nil {
				return false, err.Error()
			}
			if apihelpers.IsCRDConditionTrue(&got, apiextensionsv1.Established) {
				return true, ""
			}
			return false, "not Established"
		})
		if err != nil {
			return fmt.Errorf("the CRD %s: %w", crd.GetName(), err)
		}
	}
	return nil
}

// namespaces are Namespace objects to apply.
func namespaces(names ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, name := range names {
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName(name)
		out = append(out, ns)
	}
	return out
}

// applyAvailable applies the objects, then waits until the Deployment
// namespace/name among them is Available (waitAvailable).
func applyAvailable(ctx context.Context, c client.Client, objects []*unstructured.Unstructured, namespace, name string) error {
	if err := apply(ctx, c, objects); err != nil {
		return err
	}
	return waitAvailable(ctx, c, namespace, name)
}

// availableLimit bounds the wait for a Deployment of this package.
const availableLimit = 4 * time.Minute

// waitAvailable waits until the Deployment's current pods are Available;
// the error names what its pods wait for (an image not loaded, a secret
// missing, a crash).
func waitAvailable(ctx context.Context, c client.Client, namespace, name string) error {
	return poll.Until(ctx, availableLimit, func() (bool, string) {
		var d appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &d); err != nil {
			return false, err.Error()
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		if d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want && d.Status.AvailableReplicas >= want {
			return true, ""
		}
		return false, podsOf(ctx, c, namespace, d.Spec.Selector.MatchLabels)
	})
}

// podsOf says what the pods of a selector are waiting for.
func podsOf(ctx context.Context, c client.Client, namespace string, selector map[string]string) string {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels(selector)); err != nil {
		return err.Error()
	}
	if len(pods.Items) == 0 {
		return "no pod yet"
	}
	var states []string
	for _, p := range pods.Items {
		state := string(p.Status.Phase)
		for _, s := range p.Status.ContainerStatuses {
			switch {
			case s.State.Waiting != nil:
				state = s.Name + " " + s.State.Waiting.Reason + ": " + s.State.Waiting.Message
			case s.State.Terminated != nil:
				state = fmt.Sprintf("%s exited %d: %s", s.Name, s.State.Terminated.ExitCode, s.State.Terminated.Message)
			case !s.Ready:
				state = fmt.Sprintf("%s running, not ready (%d restarts)", s.Name, s.RestartCount)
			}
		}
		states = append(states, p.Name+": "+strings.TrimSpace(state))
	}
	return strings.Join(states, "; ")
}
