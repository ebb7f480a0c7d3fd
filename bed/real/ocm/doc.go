// Package ocm puts Open Cluster Management on the real bed's kind clusters
// and drives baton's hub flow through it: a hub that registers and accepts
// the sites, and a StorageSiteDeployment that deploys a site's storage
// through a ManifestWork the site's own work agent applies.
//
// What runs, all of it OCM v1.0.0 (open-cluster-management.io/ocm, built by
// ci/realbed/ocm-image.sh into baton.local/ocm:<hash>) except what baton
// brings:
//
//   - on the hub: OCM's hub CRDs, the registration controller (`registration
//     controller`: ManagedClusters, the cluster namespaces and the agents'
//     roles there, leases and the Available condition, CSR renewals) with
//     its own ClusterRole, the bootstrap identity sites register with
//     (OCM's cluster-manager chart's ServiceAccount and ClusterRole), and
//     baton-hub (baton's image) with its generated RBAC (deploy/hub);
//   - on each site: the klusterlet in its Default mode -- the registration
//     agent and the work agent, each with OCM's own roles -- and baton's view
//     agent (cmd/baton-view-agent), which answers ManagedClusterViews since
//     stolostron's work-manager add-on cannot be had.
//
// OCM's operators (cluster-manager, klusterlet) are not run: Install and
// Join apply what they would, rendered from the same manifest templates the
// operators render (the module's manifests/, read from the Go module cache),
// with the configuration the operators would pass for a ClusterManager and
// a Klusterlet in Default mode. Nothing else of the operators' work is
// needed for one hub and two sites, and each operator would be one more
// controller on two busy cores. Not deployed either: the webhooks (admission
// checks of OCM's own objects), placement, the add-on manager and
// ManifestWorkReplicaSets, none of which baton uses.
//
// Accepting a site is what `clusteradm accept` does: its pending CSRs
// approved and hubAcceptsClient set, then the registration agent's new
// certificate and lease make the ManagedCluster Joined and Available.
//
// Every step prints one line with the time since the start and how long it
// took (NewProgress).
package ocm
