package infra

import (
	"context"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/baton-dr/baton/bed/real/ocm"
)

// siteNamespace is baton's namespace on the bed's sites, where OCM's work
// agent applies the hub's works.
const siteNamespace = "baton-system"

// ocmCluster is the cluster as bed/real/ocm reaches it: by its kubeconfig.
func (in *Infra) ocmCluster(c Cluster) (ocm.Cluster, error) {
	config, err := clientcmd.BuildConfigFromFlags("", in.Paths.Kubeconfig(c.Name))
	if err != nil {
		return ocm.Cluster{}, fmt.Errorf("%s: its kubeconfig (batonctl realbed up writes it): %w", c.Name, err)
	}
	return ocm.Cluster{Name: c.Name, Config: config}, nil
}

// InstallOCM puts OCM on the running bed (bed/real/ocm): the images
// loaded into every cluster's nodes, OCM's registration controller and
// baton-hub on the hub, and each site's klusterlet and view agent, the
// site joined and accepted. Each step prints one line with its time
// (ocm.NewProgress).
func (in *Infra) InstallOCM(ctx context.Context, images ocm.Images) error {
	p := ocm.NewProgress(in.log)
	moduleDir, err := ocm.ModuleDir(ctx)
	if err != nil {
		return err
	}
	hub, err := in.ocmCluster(Hub)
	if err != nil {
		return err
	}
	for _, c := range Clusters() {
		if err := p.Step(c.Name+": images", func() (string, error) { return LoadImages(ctx, c, images.OCM, images.Baton) }); err != nil {
			return err
		}
	}
	if err := ocm.Install(ctx, p, moduleDir, hub, images); err != nil {
		return err
	}
	address, _, err := NodeContainer(ctx, Hub)
	if err != nil {
		return err
	}
	for _, c := range Sites() {
		site, err := in.ocmCluster(c)
		if err != nil {
			return err
		}
		if err := ocm.Join(ctx, p, moduleDir, hub, ocm.HubServer(address), ocm.Site{Cluster: site, ManagedCluster: c.Site, Namespace: siteNamespace}, images); err != nil {
			return err
		}
	}
	return nil
}

// DeployStorage deploys the named site's storage (site-a or site-b) from
// the hub through OCM -- a StorageSiteDeployment, its draft approved --
// and follows it until the storage cluster is Online, each step printed
// with its time. It returns one line saying what it deployed.
func (in *Infra) DeployStorage(ctx context.Context, name string) (string, error) {
	var site *Cluster
	for _, c := range Sites() {
		if c.Site == name {
			site = &c
		}
	}
	if site == nil {
		return "", fmt.Errorf("no site %q on the bed: site-a or site-b", name)
	}
	hub, err := in.ocmCluster(Hub)
	if err != nil {
		return "", err
	}
	d, err := ocm.DeployStorage(ctx, ocm.NewProgress(in.log), hub, ocm.Request(name+"-storage", name, siteNamespace, name, []string{site.Node()},
		ReplicationInterval))
	if err != nil {
		return "", err
	}
	c := d.Last().Status.Cluster
	return fmt.Sprintf("%s: storage cluster %s (%s), pool %s, nodes %v; %s", name, c.Name, c.ClusterID, c.Pool, c.Nodes,
		ocm.Transitions(d.Seen())), nil
}
