package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// FieldManager is the field manager of the server-side apply the work agent
// performs on the site's draft. OCM requires it to start with "work-agent"
// (the ManifestWork CRD's pattern ^work-agent); the suffix names the hub so a
// site's managedFields say who sized and approved the draft. ARCHITECTURE.md
// names the manager hub-deploy, which OCM would refuse.
const FieldManager = "work-agent-baton-hub"

// Labels and annotations tie the hub's objects in a site's namespace back to
// the request that wrote them (an owner reference cannot cross namespaces).
// The label carries a hash (label values are short), the annotation the
// request's namespace/name.
const (
	// DeploymentLabel marks a StorageSiteDeployment's work and views.
	DeploymentLabel = "storage.baton.dev/site-deployment"
	// TestFailoverLabel marks a SiteTestFailover's work and view.
	TestFailoverLabel = "storage.baton.dev/site-test-failover"
	// RequestAnnotation is the namespace/name of the request.
	RequestAnnotation = "storage.baton.dev/request"
	// specHashAnnotation is the hash of the work spec the hub last wrote.
	specHashAnnotation = "storage.baton.dev/spec-hash"
	// ManagedByLabel marks what the hub creates on a site.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is ManagedByLabel's value.
	ManagedByValue = "baton-hub"
)

// Finalizers of the hub's requests.
const (
	// DeploymentFinalizer releases a StorageSiteDeployment's work and views.
	DeploymentFinalizer = "storage.baton.dev/site-deployment"
	// TestFailoverFinalizer releases a SiteTestFailover's work and view.
	TestFailoverFinalizer = "storage.baton.dev/site-test-failover"
)

// nameStemBytes bounds the readable part of a derived name; a hash follows it.
const nameStemBytes = 40

// hashOf is a short, stable digest of its parts.
func hashOf(length int, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:])[:length]
}

// requestKey is the label value naming a request: namespace and name hashed,
// because a label value holds at most 63 characters.
func requestKey(namespace, name string) string { return hashOf(16, namespace, name) }

// derivedName builds a DNS-subdomain name from a prefix, a readable stem (cut
// to nameStemBytes, without a trailing separator) and a hash that keeps it
// unique when the stem is cut or shared.
func derivedName(prefix, stem, hash string) string {
	if len(stem) > nameStemBytes {
		stem = stem[:nameStemBytes]
	}
	stem = strings.TrimRight(stem, "-.")
	return prefix + "-" + stem + "-" + hash
}

// deploymentWorkName is the ManifestWork of a StorageSiteDeployment.
func deploymentWorkName(namespace, name string) string {
	return derivedName("baton-storage", name, hashOf(10, namespace, name))
}

// testFailoverWorkName is the ManifestWork of a SiteTestFailover.
func testFailoverWorkName(namespace, name string) string {
	return derivedName("baton-drill", name, hashOf(10, namespace, name))
}

// siteTestFailoverName is the TestFailover the drill creates on the site:
// unique per request, since two hub namespaces may use one name.
func siteTestFailoverName(namespace, name string) string {
	return derivedName("hub", name, hashOf(8, namespace, name))
}

// runName is the OperatorOps of one discovery: the discovery's canonical JSON
// is part of the hash, so a changed discovery is a new name, a new run.
func runName(namespace, name, discoveryJSON string) string {
	return derivedName("hub", name, hashOf(8, namespace, name, discoveryJSON))
}

// The views of a request's work, named after it.
func draftViewName(work string) string   { return work + "-draft" }
func clusterViewName(work string) string { return work + "-cluster" }
func nodeViewName(work, node string) string {
	return work + "-node-" + hashOf(8, node)
}
func drillViewName(work string) string { return work + "-drill" }
