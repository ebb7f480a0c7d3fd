package infra

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/baton-dr/baton/storageapi"
)

// CSISecret reads the site's CSI secret's clusters document.
func (in *Infra) CSISecret(ctx context.Context, c Cluster) (storageapi.Clusters, error) {
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
