// Package site is baton's site operator: the Kubernetes shell around one
// site's storage control plane (storage/core).
//
// The CRDs are the state. Store keeps the core's records in Volume,
// Replication, Replica and StorageNode objects and reads them back exactly as
// written (a table of records and a differential run against the core's
// MemoryStore prove it, on a real API server and on controller-runtime's fake
// client). Operator owns the one core.Site of the site behind a mutex and ticks
// it; the reconcilers turn the records into conditions people read, carry the
// deployment flow (OperatorOps → ClusterDeploymentConfig → StorageCluster and
// StorageNodes), run test fail-overs, and keep the CSI secret's local entries.
//
// Every reconciler is a plain Reconcile(ctx, request) against a client.Client
// with an injected clock: no goroutine and no wall clock inside, so a test calls
// them in a fixed order and gets the same objects twice.
package site
