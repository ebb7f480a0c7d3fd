package site

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

// CSISecretKey is the key of the CSI secret that holds the clusters.
const CSISecretKey = "clusters"

// ErrMalformedSecret: the CSI secret's clusters do not parse. The operator
// then writes nothing: rewriting it would drop the entries peer sites put there.
var ErrMalformedSecret = errors.New("the CSI secret's clusters entry is malformed")

// ErrMalformedPeersSecret: the peers secret's clusters do not parse. The
// operator then writes nothing rather than drop the peers it lists.
var ErrMalformedPeersSecret = errors.New("the peers secret's clusters entry is malformed")

// csiCluster is one entry of the CSI secret. cluster_secret is the bearer
// token of the cluster's storage API: it is never logged, never put in an
// error, never in an event.
type csiCluster struct {
	ClusterID       string `json:"cluster_id"`
	ClusterEndpoint string `json:"cluster_endpoint"`
	ClusterSecret   string `json:"cluster_secret"`
	Local           bool   `json:"local"`
}

// +kubebuilder:rbac:groups="",namespace=baton-system,resources=secrets,verbs=get;list;watch;create;update

// CSISecretReconciler keeps the CSI secret's local entries: one per
// StorageCluster of the namespace (local=true), with this site's storage API
// endpoint and a secret drawn once and kept for ever after. Entries peer sites
// registered (local=false) are kept as they are (whitespace aside), in their
// order, after the local ones. The peers secret, when named, registers its
// clusters as peers too (the Helm chart's peers value writes it, so that the
// chart never writes the CSI secret the operator owns).
type CSISecretReconciler struct {
	Client    client.Client
	Namespace string
	// SecretName is the CSI secret in Namespace.
	SecretName string
	// PeersSecretName is a Secret in Namespace whose clusters key lists peer
	// sites' clusters, each registered in the CSI secret as a peer
	// (local=false) in place of an entry of the same cluster; empty is none.
	PeersSecretName string
	// Endpoint is this site's storage API as peers and the CSI driver reach it.
	Endpoint string
	// Random draws new cluster secrets: crypto/rand in production.
	Random io.Reader
}

func (r *CSISecretReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx).WithValues("secret", r.SecretName)
	var clusters v1.StorageClusterList
	if err := r.Client.List(ctx, &clusters, client.InNamespace(r.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to list storage clusters: %w", err)
	}
	var local []string
	for _, c := range clusters.Items {
		local = append(local, string(c.Spec.ClusterID))
	}
	slices.Sort(local)
	var secret corev1.Secret
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: r.SecretName}, &secret)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("failed to read the CSI secret: %w", err)
	}
	declared, err := r.declaredPeers(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	data, err := r.render(secret.Data[CSISecretKey], local, declared)
	if err != nil {
		return ctrl.Result{}, err
	}
	if exists && bytes.Equal(secret.Data[CSISecretKey], data) {
		return ctrl.Result{}, nil
	}
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	secret.Data[CSISecretKey] = data
	if exists {
		err = r.Client.Update(ctx, &secret)
	} else {
		secret.ObjectMeta = metav1.ObjectMeta{Namespace: r.Namespace, Name: r.SecretName}
		err = r.Client.Create(ctx, &secret)
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to write the CSI secret: %w", err)
	}
	logger.Info("CSI secret written", "localClusters", local)
	return ctrl.Result{}, nil
}

// declaredPeers reads the peers secret; a missing one declares none.
func (r *CSISecretReconciler) declaredPeers(ctx context.Context) ([]csiCluster, error) {
	if r.PeersSecretName == "" {
		return nil, nil
	}
	var secret corev1.Secret
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: r.PeersSecretName}, &secret)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read the peers secret: %w", err)
	}
	var declared struct {
		Clusters []csiCluster `json:"clusters"`
	}
	if data := secret.Data[CSISecretKey]; len(data) > 0 {
		if err := json.Unmarshal(data, &declared); err != nil {
			return nil, ErrMalformedPeersSecret // the parser's message could quote a secret
		}
	}
	for i := range declared.Clusters {
		declared.Clusters[i].Local = false
	}
	return declared.Clusters, nil
}

// render builds the secret's clusters from what it holds now and the
// declared peers, which replace stored entries of the same clusters.
func (r *CSISecretReconciler) render(current []byte, local []string, declared []csiCluster) ([]byte, error) {
	var stored struct {
		Clusters []json.RawMessage `json:"clusters"`
	}
	if len(current) > 0 {
		if err := json.Unmarshal(current, &stored); err != nil {
			return nil, ErrMalformedSecret // the parser's message could quote the secret
		}
	}
	kept := map[string]csiCluster{}
	var peers []json.RawMessage
	for _, raw := range stored.Clusters {
		var entry csiCluster
		if err := json.Unmarshal(raw, &entry); err != nil {
			return nil, ErrMalformedSecret
		}
		switch {
		case slices.Contains(local, entry.ClusterID):
			kept[entry.ClusterID] = entry // ours: its secret stays
		case slices.ContainsFunc(declared, func(d csiCluster) bool { return d.ClusterID == entry.ClusterID }):
			// re-registered below, as the peers secret says
		case !entry.Local:
			peers = append(peers, raw)
		} // a local entry of a cluster this site no longer has is dropped
	}
	out := struct {
		Clusters []any `json:"clusters"`
	}{Clusters: []any{}}
	for _, id := range local {
		entry, ok := kept[id]
		if !ok || entry.ClusterSecret == "" {
			secret, err := r.newSecret()
			if err != nil {
				return nil, err
			}
			entry = csiCluster{ClusterID: id, ClusterSecret: secret}
		}
		entry.ClusterEndpoint, entry.Local = r.Endpoint, true
		out.Clusters = append(out.Clusters, entry)
	}
	for _, raw := range peers {
		out.Clusters = append(out.Clusters, raw)
	}
	for _, entry := range declared {
		if !slices.Contains(local, entry.ClusterID) { // a cluster is not its own peer
			out.Clusters = append(out.Clusters, entry)
		}
	}
	return json.Marshal(out)
}

func (r *CSISecretReconciler) newSecret() (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(r.Random, b[:]); err != nil {
		return "", fmt.Errorf("failed to draw a cluster secret: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// SetupWithManager wakes the one request on any StorageCluster, on the
// secret itself (a peer registering, a person editing) and on the peers
// secret.
func (r *CSISecretReconciler) SetupWithManager(m ctrl.Manager) error {
	only := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: r.SecretName}}}
	})
	return ctrl.NewControllerManagedBy(m).Named("csi-secret").
		Watches(&v1.StorageCluster{}, only).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			ours := o.GetName() == r.SecretName || r.PeersSecretName != "" && o.GetName() == r.PeersSecretName
			if o.GetNamespace() != r.Namespace || !ours {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
		})).Complete(r)
}
