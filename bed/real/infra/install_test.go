package infra

import (
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

func csiNode(name string, drivers ...string) storagev1.CSINode {
	n := storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, d := range drivers {
		n.Spec.Drivers = append(n.Spec.Drivers, storagev1.CSINodeDriver{Name: d, NodeID: name})
	}
	return n
}

func readyNodes(n int32) []v1.StorageCluster {
	return []v1.StorageCluster{{Status: v1.StorageClusterStatus{ReadyNodeCount: n}}}
}

// A btrfs site is ready as it always was: one Ready node and the driver on
// its one node.
func TestABtrfsSiteIsReadyWithItsOneNode(t *testing.T) {
	nodes := StorageBtrfs.StorageNodes(SiteA)
	if waiting := siteWaiting(nodes, nil, nil); !strings.Contains(waiting, "no storage cluster") {
		t.Errorf("without a storage cluster: %q", waiting)
	}
	if waiting := siteWaiting(nodes, readyNodes(0), []storagev1.CSINode{csiNode(SiteA.Node(), csiDriver)}); waiting == "" {
		t.Error("ready without a Ready node")
	}
	if waiting := siteWaiting(nodes, readyNodes(1), []storagev1.CSINode{csiNode(SiteA.Node())}); !strings.Contains(waiting, SiteA.Node()) {
		t.Errorf("the driver unregistered: %q", waiting)
	}
	if waiting := siteWaiting(nodes, readyNodes(1), []storagev1.CSINode{csiNode(SiteA.Node(), csiDriver)}); waiting != "" {
		t.Errorf("ready site waits: %q", waiting)
	}
}

// A zfs-drbd site waits for both storage workers: both counted Ready by its
// storage cluster and the driver registered on each, the control plane's
// registration (where the DaemonSet does not run) counting for nothing.
func TestAZFSDRBDSiteWaitsForEveryStorageNode(t *testing.T) {
	nodes := StorageZFSDRBD.StorageNodes(SiteA)
	worker, worker2 := nodes[0], nodes[1]
	all := []storagev1.CSINode{csiNode(SiteA.Node(), csiDriver), csiNode(worker, csiDriver), csiNode(worker2, csiDriver)}
	if waiting := siteWaiting(nodes, readyNodes(1), all); !strings.Contains(waiting, "1 Ready nodes of 2") {
		t.Errorf("one Ready node of two: %q", waiting)
	}
	partly := []storagev1.CSINode{csiNode(SiteA.Node(), csiDriver), csiNode(worker, csiDriver), csiNode(worker2, "other.example.com")}
	if waiting := siteWaiting(nodes, readyNodes(2), partly); !strings.Contains(waiting, worker2) || strings.Contains(waiting, worker+",") {
		t.Errorf("the driver missing on %s: %q", worker2, waiting)
	}
	if waiting := siteWaiting(nodes, readyNodes(2), all[1:]); waiting != "" {
		t.Errorf("both workers ready, the site waits: %q", waiting)
	}
}
