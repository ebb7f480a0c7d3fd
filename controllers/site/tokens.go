package site

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storageapi"
)

// SecretTokens derives each replica's stream token from this cluster's secret
// (the CSI secret's local entry): HMAC-SHA256(secret, source). Nothing secret
// is stored in a record, the receiving nodes and the sender (told through the
// authenticated storage API) agree, and a new cluster secret rotates every
// token. Without the secret the token is empty, which node agents refuse.
type SecretTokens struct {
	Reader     client.Reader
	Namespace  string
	SecretName string
	// Cluster is this cluster; empty takes the secret's only local entry.
	Cluster chain.ClusterID
}

// Token is the token of source's replica on this cluster.
func (t SecretTokens) Token(source chain.Ref) string {
	secret := t.clusterSecret()
	if secret == "" {
		return ""
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("baton replica token\x00" + source.String()))
	return hex.EncodeToString(mac.Sum(nil))
}

func (t SecretTokens) clusterSecret() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var secret corev1.Secret
	if err := t.Reader.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.SecretName}, &secret); err != nil {
		return ""
	}
	clusters, err := storageapi.ParseClusters(secret.Data[storageapi.SecretKey])
	if err != nil {
		return ""
	}
	var local []storageapi.ClusterEntry
	for _, e := range clusters.Entries {
		if e.Local && (t.Cluster == "" || e.ID == t.Cluster) {
			local = append(local, e)
		}
	}
	if len(local) != 1 {
		return "" // none, or ambiguous: refuse rather than guess
	}
	return local[0].Secret
}
