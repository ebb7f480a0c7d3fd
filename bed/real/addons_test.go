package real

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestCSIAddonsReachesTheDriverOnceEachNodeIsConnected reads CSIAddonsNodes
// as csi-addons v0.12.0 writes them: none yet waits, one the manager
// failed to reach waits with its message, one being deleted (the stall's
// start) waits though it still says Connected, and one Connected is done.
func TestCSIAddonsReachesTheDriverOnceEachNodeIsConnected(t *testing.T) {
	node := func(state, message string, deleting bool) unstructured.Unstructured {
		n := unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"state": state, "message": message}}}
		n.SetName("baton-site-a-control-plane-baton-system-deployment-baton-csi-controller")
		if deleting {
			now := metav1.Now()
			n.SetDeletionTimestamp(&now)
		}
		return n
	}
	if got := addonsWaiting(nil); got != "no CSIAddonsNode yet" {
		t.Errorf("none: %q", got)
	}
	if got := addonsWaiting([]unstructured.Unstructured{node("Failed", "Failed to establish connection with sidecar", false)}); !strings.Contains(got, "Failed to establish connection") {
		t.Errorf("failed: %q", got)
	}
	if got := addonsWaiting([]unstructured.Unstructured{node("Connected", "", true)}); got == "" {
		t.Error("one being deleted counts as connected")
	}
	if got := addonsWaiting([]unstructured.Unstructured{node("Connected", "Successfully established connection with sidecar", false)}); got != "" {
		t.Errorf("connected: %q", got)
	}
}
