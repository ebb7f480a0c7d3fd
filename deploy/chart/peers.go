package chart

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storageapi"
)

// ErrNoLocalEntry: the site's CSI secret has no local entry for the cluster
// yet; the operator writes it once the StorageCluster exists. Try again.
var ErrNoLocalEntry = errors.New("the CSI secret has no local entry for the cluster yet")

// LocalPeer reads the site's own cluster entry from the CSI secret its
// operator writes (values.Secrets.CSI in the target's namespace), of
// values.Site.ClusterID or, when that is empty, of the one local cluster:
// what the other site's values.Peers list to register this site. The entry carries the
// cluster secret: hand it on, never log it.
func LocalPeer(ctx context.Context, t Target, values Values) (Peer, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return Peer{}, err
	}
	cl, err := client.New(t.Config, client.Options{Scheme: scheme})
	if err != nil {
		return Peer{}, fmt.Errorf("failed to reach the cluster: %w", err)
	}
	namespace := t.Release.withDefaults().Namespace
	var secret corev1.Secret
	if err := cl.Get(ctx, client.ObjectKey{Namespace: namespace, Name: values.Secrets.CSI}, &secret); err != nil {
		return Peer{}, fmt.Errorf("failed to read the CSI secret %s/%s: %w", namespace, values.Secrets.CSI, err)
	}
	clusters, err := storageapi.ParseClusters(secret.Data[storageapi.SecretKey])
	if err != nil {
		return Peer{}, fmt.Errorf("the CSI secret %s/%s: %w", namespace, values.Secrets.CSI, err)
	}
	id := chain.ClusterID(values.Site.ClusterID)
	if local := clusters.Local(); id == "" && len(local) == 1 {
		id = local[0] // the namespace's only cluster, as the operator runs it
	}
	entry, ok := clusters.Entry(id)
	if !ok || !entry.Local {
		return Peer{}, fmt.Errorf("%w: cluster %q in %s/%s", ErrNoLocalEntry, values.Site.ClusterID, namespace, values.Secrets.CSI)
	}
	return Peer{ClusterID: string(entry.ID), Endpoint: entry.Endpoint, Secret: entry.Secret}, nil
}
