package real

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/baton-dr/baton/storageapi"
)

// RegisterPeers registers each site in the other's CSI secret, as a peer
// site registers itself: the other site's local entry (its endpoint -- the
// NodePort on its node's address -- and its cluster secret), marked
// local=false, beside the site's own. It returns the sites whose secret it
// changed; a secret that lists its peer already is left as it is.
func (in *Infra) RegisterPeers(ctx context.Context) ([]Cluster, error) {
	locals := map[string]storageapi.ClusterEntry{}
	documents := map[string]storageapi.Clusters{}
	for _, c := range Sites() {
		doc, err := in.csiSecret(ctx, c)
		if err != nil {
			return nil, err
		}
		entry, ok := doc.Entry(c.ID)
		if !ok || !entry.Local {
			return nil, fmt.Errorf("%s: its CSI secret has no local entry for cluster %s yet (the operator writes it)", c.Name, c.ID)
		}
		locals[c.Name], documents[c.Name] = entry, doc
	}
	var changed []Cluster
	for _, c := range Sites() {
		entries := []storageapi.ClusterEntry{locals[c.Name]}
		for _, peer := range Sites() {
			if peer.Name != c.Name {
				entry := locals[peer.Name]
				entry.Local = false
				entries = append(entries, entry)
			}
		}
		data, err := json.Marshal(storageapi.Clusters{Entries: entries})
		if err != nil {
			return changed, err
		}
		if _, err := storageapi.ParseClusters(data); err != nil {
			return changed, fmt.Errorf("%s: the document the bed would register: %w", c.Name, err)
		}
		client, _, err := in.Client(c)
		if err != nil {
			return changed, err
		}
		secret, err := client.CoreV1().Secrets("baton-system").Get(ctx, "baton-csi", metav1.GetOptions{})
		if err != nil {
			return changed, err
		}
		if bytes.Equal(secret.Data[storageapi.SecretKey], data) {
			continue
		}
		secret.Data[storageapi.SecretKey] = data
		if _, err := client.CoreV1().Secrets("baton-system").Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
			return changed, fmt.Errorf("%s: registering its peer in the CSI secret: %w", c.Name, err)
		}
		changed = append(changed, c)
	}
	return changed, nil
}

// csiSecret reads the site's CSI secret's clusters document.
func (in *Infra) csiSecret(ctx context.Context, c Cluster) (storageapi.Clusters, error) {
	client, _, err := in.Client(c)
	if err != nil {
		return storageapi.Clusters{}, err
	}
	secret, err := client.CoreV1().Secrets("baton-system").Get(ctx, "baton-csi", metav1.GetOptions{})
	if err != nil {
		return storageapi.Clusters{}, fmt.Errorf("%s: the CSI secret: %w", c.Name, err)
	}
	doc, err := storageapi.ParseClusters(secret.Data[storageapi.SecretKey])
	if err != nil {
		return doc, fmt.Errorf("%s: the CSI secret: %w", c.Name, err)
	}
	return doc, nil
}
