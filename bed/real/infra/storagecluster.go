package infra

import (
	"context"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/storage/chain"
)

// Which storage cluster a site runs, and who made it: the site's chart
// (storageCluster.create, with the layout's ChartID) or the hub, through
// OCM (a StorageSiteDeployment whose approved draft the site's operator
// expanded, with a UUID the site drew).

// OCMEnv turns the bed's OCM off: "0" leaves OCM out of make realbed and
// has the chart make site B's storage cluster too.
const OCMEnv = "BATON_REALBED_OCM"

// HubDeployed is the site whose storage the hub deploys through OCM when
// the bed runs OCM (the seed's path: a StorageSiteDeployment, the draft
// reviewed and approved, the StorageCluster arriving by ManifestWork).
var HubDeployed = SiteB

// OCMFromEnv reads OCMEnv: on unless "0".
func OCMFromEnv() bool { return os.Getenv(OCMEnv) != "0" }

// byHub: the hub, not the chart, deploys the site's storage cluster. The
// bed's request is a btrfs pool of one replica (ocm.Request): in zfs-drbd
// mode the chart makes both.
func (in *Infra) byHub(c Cluster) bool {
	return in.OCM && in.Storage == StorageBtrfs && c.Name == HubDeployed.Name
}

// helmRelease is the annotation Helm puts on every object of a release.
const helmRelease = "meta.helm.sh/release-name"

// siteStorageCluster is the site's one StorageCluster in baton-system, nil
// when it has none yet. The operator runs the namespace's only one (the
// chart's site.clusterID is empty for a site the hub deploys), so two are
// an error.
func siteStorageCluster(ctx context.Context, objects client.Reader) (*v1.StorageCluster, error) {
	var list v1.StorageClusterList
	if err := objects.List(ctx, &list, client.InNamespace("baton-system")); meta.IsNoMatchError(err) {
		return nil, nil // baton's CRDs are not there yet: before the chart's first install
	} else if err != nil {
		return nil, fmt.Errorf("its StorageClusters: %w", err)
	}
	switch len(list.Items) {
	case 0:
		return nil, nil
	case 1:
		return &list.Items[0], nil
	}
	var names []string
	for _, sc := range list.Items {
		names = append(names, sc.Name)
	}
	return nil, fmt.Errorf("%d StorageClusters in baton-system (%s), the bed's sites run one: make realbed-down, then make realbed",
		len(names), strings.Join(names, ", "))
}

// storageClusterID is the UUID of the storage cluster the site runs, read
// from the site: what its records, its CSI secret and its peers name.
func storageClusterID(ctx context.Context, objects client.Reader, c Cluster) (chain.ClusterID, error) {
	sc, err := siteStorageCluster(ctx, objects)
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.Name, err)
	}
	if sc == nil || sc.Spec.ClusterID == "" {
		return "", fmt.Errorf("%s has no storage cluster yet (make realbed deploys it: by its chart, or for %s with OCM through the hub, batonctl realbed ocm deploy-storage %s)",
			c.Name, HubDeployed.Name, HubDeployed.Site)
	}
	return chain.ClusterID(sc.Spec.ClusterID), nil
}

// StorageClusterID reads the UUID of the storage cluster the site runs.
func (in *Infra) StorageClusterID(ctx context.Context, c Cluster) (chain.ClusterID, error) {
	objects, err := in.Objects(c)
	if err != nil {
		return "", err
	}
	return storageClusterID(ctx, objects, c)
}

// checkStorageMaker refuses to switch a site's existing storage cluster
// between its makers: an upgrade of the chart without storageCluster.create
// would delete the chart's StorageCluster (and with it the site's volumes'
// cluster), and one with it would make a second beside the hub's.
func checkStorageMaker(sc *v1.StorageCluster, byHub bool, c Cluster) error {
	if sc == nil {
		return nil
	}
	byChart := sc.Annotations[helmRelease] != ""
	switch {
	case byHub && byChart:
		return fmt.Errorf("%s's storage cluster %s was made by the chart (a bring-up with %s=0): the hub cannot deploy it now; make realbed-down first, or set %s=0",
			c.Name, sc.Name, OCMEnv, OCMEnv)
	case !byHub && !byChart:
		return fmt.Errorf("%s's storage cluster %s was not made by the chart (the hub deployed it, draft %q): the chart would make a second; make realbed-down first, or leave %s unset",
			c.Name, sc.Name, sc.Labels[sitecontroller.DraftLabel], OCMEnv)
	}
	return nil
}
