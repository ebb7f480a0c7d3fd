package infra

import (
	"context"
	"fmt"
	"time"

	"github.com/csi-addons/spec/lib/go/replication"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed/ramen"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/internal/poll"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// proofNamespace holds the replication proof's claim.
const proofNamespace = "baton-replication-proof"

// proofLimit bounds each step of the replication proof.
const proofLimit = 3 * time.Minute

// ProveReplication proves cross-site replication end to end: a claim on
// site A (a volume made by external-provisioner through baton-csi), its
// replication to site B enabled and promoted through the CSI controller's
// csi-addons socket in Ramen's order, and the snapshots A ships received
// on B's node, as B's own records show them. The volume is taken out
// again (replication disabled, the claim deleted).
func (in *Infra) ProveReplication(ctx context.Context) (string, error) {
	from, to := SiteA, SiteB
	handle, err := in.proofClaim(ctx, from)
	if err != nil {
		return "", err
	}
	conn, err := grpc.NewClient("unix://"+in.Paths.AddonsSocket(from.Name), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	addons := ramen.GRPC{C: replication.NewControllerClient(conn)}
	vr := &ramen.VR{Handle: handle, Site: from.Site}
	vr.Want(ramen.Primary, false)
	if err := poll.Until(ctx, proofLimit, func() (bool, string) {
		vr.Reconcile(ctx, addons)
		return vr.Info.GetLastSyncTime() != nil, vr.LastError
	}); err != nil {
		return "", fmt.Errorf("%s: enable and promote %s toward %s, then a first sync: %w", from.Name, handle, to.Name, err)
	}
	store, err := in.Store(ctx, to)
	if err != nil {
		return "", err
	}
	root, err := chain.ParseRef(handle)
	if err != nil {
		return "", err
	}
	var received []core.SnapshotInfo
	var node string
	if err := poll.Until(ctx, proofLimit, func() (bool, string) {
		replicas, err := store.Replicas()
		if err != nil {
			return false, err.Error()
		}
		for _, r := range replicas {
			if r.Root != root {
				continue
			}
			for n, snapshots := range r.Received {
				if len(snapshots) > 0 {
					node, received = n, snapshots
					return true, ""
				}
			}
			return false, fmt.Sprintf("%s records the replica of %s, no snapshot received yet", to.Name, r.Source)
		}
		return false, fmt.Sprintf("%s records no replica of %s", to.Name, handle)
	}); err != nil {
		return "", fmt.Errorf("%s: the snapshots of %s: %w", to.Name, handle, err)
	}
	vr.Want(ramen.Deleted, false)
	if err := poll.Until(ctx, proofLimit, func() (bool, string) {
		vr.Reconcile(ctx, addons)
		return vr.Disabled, vr.LastError
	}); err != nil {
		return "", fmt.Errorf("%s: disable the replication of %s: %w", from.Name, handle, err)
	}
	newest := received[len(received)-1]
	return fmt.Sprintf("volume %s on %s replicated to %s: %d snapshots received on %s, the newest %s", handle, from.Name, to.Name,
		len(received), node, newest.Name), in.deleteProofClaim(ctx, from)
}

// proofClaim makes a block claim of the StorageClass baton on the site
// and returns its volume's handle once it is bound.
func (in *Infra) proofClaim(ctx context.Context, c Cluster) (string, error) {
	client, _, err := in.Client(c)
	if err != nil {
		return "", err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: proofNamespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	block, class := corev1.PersistentVolumeBlock, "baton"
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "replicated", Namespace: proofNamespace},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeMode: &block, StorageClassName: &class, Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("256Mi")}}}}
	if _, err := client.CoreV1().PersistentVolumeClaims(proofNamespace).Create(ctx, claim, metav1.CreateOptions{}); err != nil &&
		!apierrors.IsAlreadyExists(err) {
		return "", err
	}
	var handle string
	err = poll.Until(ctx, proofLimit, func() (bool, string) {
		got, err := client.CoreV1().PersistentVolumeClaims(proofNamespace).Get(ctx, "replicated", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if got.Status.Phase != corev1.ClaimBound {
			return false, "the claim is " + string(got.Status.Phase)
		}
		pv, err := client.CoreV1().PersistentVolumes().Get(ctx, got.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		handle = pv.Spec.CSI.VolumeHandle
		return true, ""
	})
	if err != nil {
		return "", fmt.Errorf("%s: the claim %s/replicated: %w", c.Name, proofNamespace, err)
	}
	return handle, nil
}

// deleteProofClaim deletes the proof's namespace; the CSI controller
// deletes its volume.
func (in *Infra) deleteProofClaim(ctx context.Context, c Cluster) error {
	client, _, err := in.Client(c)
	if err != nil {
		return err
	}
	err = client.CoreV1().Namespaces().Delete(ctx, proofNamespace, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Store reads the site's storage records (the operator's objects) as the
// operator's store does.
func (in *Infra) Store(ctx context.Context, c Cluster) (*sitecontroller.Store, error) {
	cl, err := in.Objects(c)
	if err != nil {
		return nil, err
	}
	id, err := storageClusterID(ctx, cl, c)
	if err != nil {
		return nil, err
	}
	return sitecontroller.NewStore(sitecontroller.StoreConfig{Client: cl, Namespace: "baton-system", Cluster: id,
		ClusterName: c.Name, Context: ctx, CallTimeout: 20 * time.Second})
}

// Objects is a client of the cluster's objects, baton's among them.
func (in *Infra) Objects(c Cluster) (client.Client, error) {
	config, err := clientcmd.BuildConfigFromFlags("", in.Paths.Kubeconfig(c.Name))
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return client.New(config, client.Options{Scheme: scheme})
}
