package site

// The operator's own permissions beyond its reconcilers': leader election
// (a Lease in its namespace) and the events the manager's leader election
// records. Everything is namespaced to the operator's namespace
// (baton-system in the manifests) except PersistentVolumes and the bubble
// PVCs of test fail-overs, whose target namespaces the drills name.
//
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=baton-system,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",namespace=baton-system,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,namespace=baton-system,resources=events,verbs=create;patch
