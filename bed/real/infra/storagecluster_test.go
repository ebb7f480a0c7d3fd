package infra

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/deploy/chart"
)

// TestTheHubDeploysSiteBsStorageWithOCM renders both sites' releases as the
// bed installs them, with OCM and without: with it, site B's release makes
// no StorageCluster, names no cluster UUID (its operator runs the one the
// hub's flow expands) and hands the operator's discovery runs the node's
// pool file at its address; site A's, and site B's without OCM, make the
// StorageCluster with the layout's UUID. Both ship every 10 s.
func TestTheHubDeploysSiteBsStorageWithOCM(t *testing.T) {
	for _, tc := range []struct {
		ocm  bool
		site Cluster
		hub  bool
	}{{true, SiteA, false}, {true, SiteB, true}, {false, SiteA, false}, {false, SiteB, false}} {
		in := &Infra{OCM: tc.ocm, Storage: StorageBtrfs}
		values := siteValues(t, tc.site)
		if _, err := in.Storage.siteStorage(tc.site, &values, "10.250.0.3", nil); err != nil {
			t.Fatal(err)
		}
		in.storageClusterValues(tc.site, &values, "10.250.0.3")
		r, err := chart.Render(context.Background(), values, chart.Release{})
		if err != nil {
			t.Fatalf("OCM %v, %s: %v", tc.ocm, tc.site.Name, err)
		}
		var clusters []v1.StorageCluster
		var discovery *corev1.ConfigMap
		var operatorArgs []string
		for _, o := range r.Objects {
			switch o.GetKind() {
			case "StorageCluster":
				var sc v1.StorageCluster
				fromUnstructured(t, o.Object, &sc)
				clusters = append(clusters, sc)
			case "ConfigMap":
				if o.GetName() == "baton-discovery" {
					discovery = &corev1.ConfigMap{}
					fromUnstructured(t, o.Object, discovery)
				}
			case "Deployment":
				if o.GetName() == "baton-controller" {
					var d appsv1.Deployment
					fromUnstructured(t, o.Object, &d)
					operatorArgs = d.Spec.Template.Spec.Containers[0].Args
				}
			}
		}
		namesID := slices.ContainsFunc(operatorArgs, func(a string) bool { return strings.HasPrefix(a, "--cluster-id=") })
		if tc.hub {
			if len(clusters) != 0 || namesID || discovery == nil {
				t.Fatalf("site B with OCM: %d StorageClusters, operator names a cluster id %v (%v), discovery %v", len(clusters), namesID, operatorArgs, discovery)
			}
			var nodes []chart.DiscoveryNode
			if err := json.Unmarshal([]byte(discovery.Data["discovery.json"]), &nodes); err != nil {
				t.Fatal(err)
			}
			want := []chart.DiscoveryNode{{Name: SiteB.Node(), Address: "10.250.0.3", Devices: []v1.CandidateDevice{{
				Path: hostDir + "/baton-site-b/pool/pool.img", Type: v1.DeviceTypeLoopFile, SizeBytes: poolSizeBytes}}}}
			if len(nodes) != 1 || nodes[0].Name != want[0].Name || nodes[0].Address != want[0].Address || !slices.Equal(nodes[0].Devices, want[0].Devices) {
				t.Errorf("the discovery list %+v, want %+v", nodes, want)
			}
			continue
		}
		if len(clusters) != 1 || string(clusters[0].Spec.ClusterID) != string(tc.site.ChartID) || !namesID || discovery != nil {
			t.Fatalf("OCM %v, %s: StorageClusters %+v, operator %v, discovery %v", tc.ocm, tc.site.Name, clusters, operatorArgs, discovery)
		}
		if got := clusters[0].Spec.ReplicationInterval.Duration; got != ReplicationInterval {
			t.Errorf("%s ships every %s, want %s", tc.site.Name, got, ReplicationInterval)
		}
	}
}

// TestASitesStorageIsNotSwitchedBetweenItsMakers: an existing bed is not
// upgraded from the chart's storage cluster to the hub's (the upgrade would
// delete the chart's) nor back (a second one), and a site with none yet, or
// with the one its maker made, goes ahead.
func TestASitesStorageIsNotSwitchedBetweenItsMakers(t *testing.T) {
	chartMade := &v1.StorageCluster{ObjectMeta: metav1.ObjectMeta{Name: "baton-site-b", Annotations: map[string]string{helmRelease: "baton"}}}
	hubMade := &v1.StorageCluster{ObjectMeta: metav1.ObjectMeta{Name: "site-b", Labels: map[string]string{sitecontroller.DraftLabel: "site-b-storage-1"}}}
	for _, tc := range []struct {
		sc    *v1.StorageCluster
		byHub bool
		want  string
	}{
		{nil, true, ""}, {nil, false, ""}, {chartMade, false, ""}, {hubMade, true, ""},
		{chartMade, true, "was made by the chart"},
		{hubMade, false, `the hub deployed it, draft "site-b-storage-1"`},
	} {
		err := checkStorageMaker(tc.sc, tc.byHub, SiteB)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v by hub %v: %v, want %q", tc.sc, tc.byHub, err, tc.want)
		}
	}
}

// TestOCMDeploysOnlyBtrfsSites: the hub's request is a btrfs pool, so in
// zfs-drbd mode, or with OCM off, the chart makes site B's storage.
func TestOCMDeploysOnlyBtrfsSites(t *testing.T) {
	for _, tc := range []struct {
		in   Infra
		site Cluster
		want bool
	}{
		{Infra{OCM: true, Storage: StorageBtrfs}, SiteB, true},
		{Infra{OCM: true, Storage: StorageBtrfs}, SiteA, false},
		{Infra{OCM: false, Storage: StorageBtrfs}, SiteB, false},
		{Infra{OCM: true, Storage: StorageZFSDRBD}, SiteB, false},
	} {
		if got := tc.in.byHub(tc.site); got != tc.want {
			t.Errorf("OCM %v, %s, %s: by hub %v, want %v", tc.in.OCM, tc.in.Storage, tc.site.Name, got, tc.want)
		}
	}
}
