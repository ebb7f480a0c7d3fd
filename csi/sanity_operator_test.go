package csi_test

import (
	"context"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	csiapi "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed/controlplane/controlplanetest"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/csi"
	"github.com/baton-dr/baton/csi/csisanity"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core/coretest"
	"github.com/baton-dr/baton/storageapi"
)

// TestSanityOnTheOperator runs csi-sanity against site A as a real site runs
// it: the site operator (controllers/site.Operator) over its CRD store on a
// real kube-apiserver and etcd, built from a StorageCluster that names no
// overcommit (the CRD's default, 400%). Each node's thin pool is 2 GiB and
// sanity's volumes are 1 GiB with two replicas: a pool that reserved each
// volume's size would refuse the third. Only the driver's test may import
// the operator: the driver itself speaks the storage API.
//
// It needs KUBEBUILDER_ASSETS (make test sets it) and root for the loop
// devices; skipped under -short.
func TestSanityOnTheOperator(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real kube-apiserver and etcd; skipped under -short")
	}
	if csisanity.InOwnProcess(t) {
		return
	}
	c := apiServer(t)
	w := newWorldWith(t, func(w *world, id chain.ClusterID, peers storageapi.Peers) *storageapi.Local {
		return operatorSite(w, c, id, peers)
	})
	w.NodeBytes = 2 << 30
	d := runSanity(t, w)
	if t.Failed() {
		return
	}

	// The pools take 1 GiB volumes until 2 GiB x 4 is provisioned on each;
	// what sanity left behind counts too. The refusal names the ratio.
	for i := range 9 {
		_, err := d.controller.CreateVolume(ctx, &csiapi.CreateVolumeRequest{Name: fmt.Sprintf("overcommit-%d", i),
			CapacityRange:      &csiapi.CapacityRange{RequiredBytes: 1 << 30},
			VolumeCapabilities: []*csiapi.VolumeCapability{mountCapability("")},
			Parameters:         map[string]string{csi.ParameterPlaceCount: "2"}})
		if err == nil {
			continue
		}
		want := "overcommit ratio 4 (thinOvercommitPercent 400)"
		if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), want) {
			t.Fatalf("volume %d refused with %v, want ResourceExhausted saying %q", i, err, want)
		}
		return
	}
	t.Fatal("two 2 GiB pools took nine 1 GiB volumes of two replicas: the ratio of 4 bounds them at eight")
}

// operatorSite runs site id on an Operator in a namespace of its own, its
// StorageCluster and StorageNodes created as the deployment flow creates them.
func operatorSite(w *world, c client.Client, id chain.ClusterID, peers storageapi.Peers) *storageapi.Local {
	ctx, cancel := context.WithCancel(context.Background())
	w.t.Cleanup(cancel)
	ns := fmt.Sprintf("sanity-%d", time.Now().UnixNano())
	name := "site-" + string(id[:1])
	objects := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&v1.StorageCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1.StorageClusterSpec{ClusterID: v1.UUID(id), StorageLayout: v1.StorageLayout{
				Pool:                v1.PoolLayout{Name: "baton", Provisioning: v1.ProvisioningThin},
				ReplicationInterval: metav1.Duration{Duration: time.Minute}, SnapshotRetention: 2}}}}
	for i := 1; i <= 2; i++ {
		node := fmt.Sprintf("%s%d", id[:1], i)
		objects = append(objects, &v1.StorageNode{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: node},
			Spec: v1.StorageNodeSpec{Cluster: name, NodeName: node, Address: fmt.Sprintf("10.0.0.%d", i)}})
	}
	for _, o := range objects {
		w.must(c.Create(ctx, o))
	}
	op, err := sitecontroller.NewOperator(sitecontroller.OperatorConfig{Client: c, Namespace: ns, Cluster: id, Context: ctx,
		Clock: w.Clock, Peers: peers, NewVolumeID: coretest.VolumeIDs(id)})
	w.must(err)
	return op.Local()
}

// The control plane the operator's records live in, shared by the package's
// tests and stopped by TestMain.
var server = controlplanetest.Shared{
	CRDs: func() ([]string, error) {
		_, file, _, _ := goruntime.Caller(0)
		return []string{filepath.Join(filepath.Dir(file), "..", "deploy", "crds")}, nil
	},
	Kinds: []func(*runtime.Scheme) error{v1.AddToScheme},
}

func apiServer(t *testing.T) client.Client { return server.Client(t) }

func TestMain(m *testing.M) { server.Main(m) }
