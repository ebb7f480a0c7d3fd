package infra

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestCSIAddonsReachesTheDriverOnceEachNodeIsConnected reads CSIAddonsNodes
// as csi-addons v0.12.0 writes them: none yet waits; one the manager failed
// to reach waits with its message; one being deleted (the stall's start)
// waits though it still says Connected; one whose Connected an earlier
// manager wrote for the rolled-out pod waits; one Connected through a
// controller pod of now is done.
func TestCSIAddonsReachesTheDriverOnceEachNodeIsConnected(t *testing.T) {
	const pod = "baton-csi-controller-56bdd5dfbc-vg7lg"
	node := func(endpointPod, state, message string, deleting bool) unstructured.Unstructured {
		n := unstructured.Unstructured{Object: map[string]any{
			"spec":   map[string]any{"driver": map[string]any{"endpoint": "pod://" + endpointPod + ".baton-system:9070"}},
			"status": map[string]any{"state": state, "message": message}}}
		n.SetName("baton-site-a-control-plane-baton-system-deployment-baton-csi-controller")
		if deleting {
			now := metav1.Now()
			n.SetDeletionTimestamp(&now)
		}
		return n
	}
	live := []string{pod}
	if got := addonsWaiting(nil, live); got != "no CSIAddonsNode yet" {
		t.Errorf("none: %q", got)
	}
	failed := node(pod, "Failed", "Failed to establish connection with sidecar", false)
	if got := addonsWaiting([]unstructured.Unstructured{failed}, live); !strings.Contains(got, "Failed to establish connection") {
		t.Errorf("failed: %q", got)
	}
	if got := addonsWaiting([]unstructured.Unstructured{node(pod, "Connected", "", true)}, live); !strings.Contains(got, "being deleted") {
		t.Errorf("one being deleted: %q", got)
	}
	stale := node("baton-csi-controller-759954b575-phwdq", "Connected", "Successfully established connection with sidecar", false)
	if got := addonsWaiting([]unstructured.Unstructured{stale}, live); !strings.Contains(got, "no controller pod of now") {
		t.Errorf("the rolled-out pod's: %q", got)
	}
	connected := node(pod, "Connected", "Successfully established connection with sidecar", false)
	if got := addonsWaiting([]unstructured.Unstructured{connected}, live); got != "" {
		t.Errorf("connected: %q", got)
	}
	if got := addonsWaiting([]unstructured.Unstructured{connected}, []string{pod[:len(pod)-1]}); got == "" {
		t.Error("a pod whose name is a prefix of the endpoint's counted")
	}
}
