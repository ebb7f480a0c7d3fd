package real

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/baton-dr/baton/bed/real/infra"
)

func podOn(node string) corev1.Pod { return corev1.Pod{Spec: corev1.PodSpec{NodeName: node}} }

// An application's pods are on the node the scheduler put them on -- the
// control plane of a one-node site, a worker of a zfs-drbd site -- and
// pods on none yet, or spread over several, are said to be, not guessed at.
func TestAnApplicationsPodsAreOnTheNodeTheSchedulerChose(t *testing.T) {
	if node, err := podsNode([]corev1.Pod{podOn(infra.SiteA.Node())}); err != nil || node != infra.SiteA.Node() {
		t.Errorf("one-node site: %q %v", node, err)
	}
	worker := infra.StorageZFSDRBD.StorageNodes(infra.SiteA)[1]
	leaving := podOn(infra.SiteA.Node())
	leaving.DeletionTimestamp = &metav1.Time{}
	if node, err := podsNode([]corev1.Pod{leaving, podOn(worker), podOn(worker)}); err != nil || node != worker {
		t.Errorf("a worker's pods, a terminating one elsewhere: %q %v", node, err)
	}
	if _, err := podsNode([]corev1.Pod{podOn("")}); err == nil || !strings.Contains(err.Error(), "scheduled") {
		t.Errorf("unscheduled: %v", err)
	}
	if _, err := podsNode([]corev1.Pod{podOn(worker), podOn(infra.SiteA.Name + "-worker")}); err == nil || !strings.Contains(err.Error(), "2 nodes") {
		t.Errorf("two nodes: %v", err)
	}
}
