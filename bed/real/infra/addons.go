package infra

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/internal/poll"
)

// csiAddonsNodeKind is the object csi-addons' sidecar makes for itself and
// its manager connects through: its status says whether the manager
// reached the sidecar (state Connected).
var csiAddonsNodeKind = schema.GroupVersionKind{Group: "csiaddons.openshift.io", Version: "v1alpha1", Kind: "CSIAddonsNodeList"}

// addonsStall is how long the bed lets csi-addons' manager go without a
// connection to the driver's sidecar before it restarts the driver's
// controller pod. csi-addons v0.12.0 stalls when its manager and the sidecar
// start together -- baton's image carries both, so every rollout starts them
// together: the manager, dialling the old pod's sidecar, fails and deletes
// the CSIAddonsNode as the new sidecar makes it; the sidecar's create is
// refused ("csiaddonnode is being deleted") and it waits out a three-minute
// deadline before it exits and makes it anew. Until then no
// VolumeReplication is served ("no leader for the ControllerService").
const addonsStall = 20 * time.Second

// addonsConnected waits until csi-addons' manager in the site reaches the
// driver's sidecar, restarting the driver's controller pod once when it
// stalls (addonsStall), so that the stall is the bring-up's, said once, and
// not a scenario's first protection's.
func (in *Infra) addonsConnected(ctx context.Context, c Cluster) (string, error) {
	objects, err := in.Objects(c)
	if err != nil {
		return "", err
	}
	clientset, _, err := in.Client(c)
	if err != nil {
		return "", err
	}
	started, restarted := time.Now(), false
	var restartErr error
	err = poll.Until(ctx, installLimit, func() (bool, string) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(csiAddonsNodeKind)
		pods, err := clientset.CoreV1().Pods("baton-system").List(ctx, metav1.ListOptions{LabelSelector: "app=baton-csi-controller"})
		if err == nil {
			err = objects.List(ctx, list, client.InNamespace("baton-system"))
		}
		if err != nil {
			return false, err.Error()
		}
		var live []string
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil {
				live = append(live, p.Name)
			}
		}
		waiting := addonsWaiting(list.Items, live)
		if waiting != "" && !restarted && time.Since(started) > addonsStall {
			restarted = true
			restartErr = clientset.CoreV1().Pods("baton-system").DeleteCollection(ctx, metav1.DeleteOptions{},
				metav1.ListOptions{LabelSelector: "app=baton-csi-controller"})
			if restartErr != nil {
				return true, "" // ends the wait: the error is said below
			}
		}
		return waiting == "", waiting
	})
	switch {
	case restartErr != nil:
		return "", fmt.Errorf("%s: restarting the driver's controller pod: %w", c.Name, restartErr)
	case err != nil:
		return "", fmt.Errorf("%s: csi-addons did not reach the driver's sidecar: %w", c.Name, err)
	case restarted:
		return fmt.Sprintf("connected after the driver's controller pod was restarted (csi-addons' sidecar stalled %s)", addonsStall), nil
	}
	return "connected to the driver's sidecar", nil
}

// addonsWaiting says why csi-addons does not reach the site's driver yet,
// given its CSIAddonsNodes and the driver's controller pods now (pods, those
// not being deleted): none made yet, one that names no pod of these -- an
// earlier pod's, whose Connected an earlier manager wrote --, one being
// deleted, or one not Connected (its message); empty once there is one and
// each is Connected through a pod of these.
func addonsWaiting(nodes []unstructured.Unstructured, pods []string) string {
	if len(nodes) == 0 {
		return "no CSIAddonsNode yet"
	}
	var waiting []string
	for _, n := range nodes {
		state, _, _ := unstructured.NestedString(n.Object, "status", "state")
		endpoint, _, _ := unstructured.NestedString(n.Object, "spec", "driver", "endpoint")
		switch {
		case n.GetDeletionTimestamp() != nil:
			waiting = append(waiting, n.GetName()+": being deleted")
		case !slices.ContainsFunc(pods, func(pod string) bool { return strings.HasPrefix(endpoint, "pod://"+pod+".") }):
			waiting = append(waiting, fmt.Sprintf("%s: names %s, no controller pod of now", n.GetName(), endpoint))
		case state != "Connected":
			message, _, _ := unstructured.NestedString(n.Object, "status", "message")
			waiting = append(waiting, fmt.Sprintf("%s: %q (%s)", n.GetName(), state, message))
		}
	}
	return strings.Join(waiting, "; ")
}
