// Package hub holds baton's hub controllers. They run on an Open Cluster
// Management hub and reach a managed site only through OCM: a ManifestWork in
// the site's namespace on the hub carries what the site should create or
// change, the site's work agent applies it, and ManagedClusterViews project
// the site's objects back. The hub never holds a site kubeconfig.
//
//   - StorageSiteDeploymentReconciler deploys a site's storage: the discovery
//     (an OperatorOps), then a server-side apply of the sizing and the
//     approval onto the draft the discovery wrote, and reads the draft, the
//     StorageCluster and its StorageNodes back. Its work orphans what it
//     created: a storage cluster is never torn down by withdrawing a request.
//   - SiteTestFailoverReconciler delivers a drill (a TestFailover) to the DR
//     site and reads it back; deleting the request deletes the drill.
//
// Each pass re-observes the work's status and the views, decides what the
// work and the views should be and what the status says in I/O-free
// functions (plan*.go), then writes. The work lives in the site's namespace,
// where an owner reference to the request cannot point, so a finalizer
// releases it and the views, and watches map them back through labels.
//
// The hub's ClusterRole in deploy/hub/rbac is generated from the rbac markers
// on the reconcilers:
//
//go:generate go tool controller-gen rbac:roleName=baton-hub paths=. output:rbac:artifacts:config=../../deploy/hub/rbac
package hub
