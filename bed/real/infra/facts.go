package infra

import (
	"context"
	"fmt"
	"os"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/baton-dr/baton/bed/real/ocm"
	"github.com/baton-dr/baton/storageapi"
)

// Facts are what a running bed has, read from the host and the clusters:
// the `lacking:` line make realbed ends with is derived from them, never
// written by hand.
type Facts struct {
	// Modules are the kernel modules zfs-drbd mode needs that this host
	// has (loaded: /sys/module/<name>).
	ZFS, DRBD bool
	// HubOCM: the hub serves OCM's ManagedCluster API (cluster-manager).
	HubOCM bool
	// HubController: baton-hub runs on the hub (its Deployment Available).
	HubController bool
	// CSIAddons: each site serves the VolumeReplication API (the
	// csi-addons controller's CRDs).
	CSIAddons map[string]bool
	// Peers: each site's CSI secret registers the other site (local=false).
	Peers map[string]bool
	// Scenarios the real bed does not run, with why, in one line: the
	// caller's, which knows the catalogue and asks the bed (bed.Can, and
	// the stories it declines).
	Scenarios string
}

// Lacking is the one line of what the bed lacks; "" when nothing.
func (f Facts) Lacking() string {
	var out []string
	switch {
	case !f.ZFS && !f.DRBD:
		out = append(out, "DRBD and ZFS (this kernel has neither module: the sites run btrfs, one node each)")
	case !f.ZFS:
		out = append(out, "ZFS (this kernel has no zfs module: the sites run btrfs)")
	case !f.DRBD:
		out = append(out, "DRBD (this kernel has no drbd module: the sites run btrfs)")
	}
	if !f.HubOCM {
		out = append(out, "OCM on the hub (no ManagedCluster API there)")
	}
	if !f.HubController {
		out = append(out, "baton-hub on the hub")
	}
	for _, c := range Sites() {
		if !f.CSIAddons[c.Name] {
			out = append(out, c.Name+" has no csi-addons controller (no VolumeReplication API)")
		}
	}
	for _, c := range Sites() {
		if !f.Peers[c.Name] {
			out = append(out, c.Name+"'s CSI secret registers no peer site (no cross-site replication)")
		}
	}
	if f.Scenarios != "" {
		out = append(out, "scenarios: "+f.Scenarios)
	}
	return strings.Join(out, "; ")
}

// ReadFacts reads what the running bed has; Scenarios is left to the
// caller.
func (in *Infra) ReadFacts(ctx context.Context) (Facts, error) {
	f := Facts{ZFS: moduleLoaded("zfs"), DRBD: moduleLoaded("drbd"), CSIAddons: map[string]bool{}, Peers: map[string]bool{}}
	hub, _, err := in.Client(Hub)
	if err != nil {
		return f, err
	}
	if f.HubOCM, f.HubController, err = hubFacts(ctx, hub); err != nil {
		return f, fmt.Errorf("%s: %w", Hub.Name, err)
	}
	for _, c := range Sites() {
		client, _, err := in.Client(c)
		if err != nil {
			return f, err
		}
		if f.CSIAddons[c.Name], err = servesResource(client, "replication.storage.openshift.io/v1alpha1", "volumereplications"); err != nil {
			return f, fmt.Errorf("%s: %w", c.Name, err)
		}
		if f.Peers[c.Name], err = registersPeer(ctx, client); err != nil {
			return f, fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	return f, nil
}

// hubFacts read the hub: does it serve OCM's ManagedCluster API, and does
// baton-hub run there -- its Deployment in its own namespace, where
// ocm.Install puts it (deploy/hub/hub.yaml's), not baton-system, which is
// the sites' namespace and does not exist on the hub.
func hubFacts(ctx context.Context, hub kubernetes.Interface) (ocmAPI, controller bool, err error) {
	if ocmAPI, err = servesResource(hub, "cluster.open-cluster-management.io/v1", "managedclusters"); err != nil {
		return false, false, err
	}
	d, err := hub.AppsV1().Deployments(ocm.HubControllerNamespace).Get(ctx, "baton-hub", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ocmAPI, false, nil
	}
	if err != nil {
		return ocmAPI, false, err
	}
	return ocmAPI, d.Status.AvailableReplicas > 0, nil
}

func moduleLoaded(name string) bool {
	_, err := os.Stat("/sys/module/" + name)
	return err == nil
}

// servesResource asks the API server's discovery whether it serves the
// resource in the group version.
func servesResource(client kubernetes.Interface, groupVersion, resource string) (bool, error) {
	list, err := client.Discovery().ServerResourcesForGroupVersion(groupVersion)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return true, nil
		}
	}
	return false, nil
}

// registersPeer reads the site's CSI secret: does it list a cluster that
// is not local?
func registersPeer(ctx context.Context, client kubernetes.Interface) (bool, error) {
	secret, err := client.CoreV1().Secrets("baton-system").Get(ctx, "baton-csi", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	clusters, err := storageapi.ParseClusters(secret.Data[storageapi.SecretKey])
	if err != nil {
		return false, fmt.Errorf("the CSI secret: %w", err)
	}
	return len(clusters.IDs()) > len(clusters.Local()), nil
}
