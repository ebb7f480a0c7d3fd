package site

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

// SecretPeers reaches the peer sites listed in the CSI secret -- the entries
// not marked local, which peer sites register -- through their storage APIs.
// It reads the secret on every call (from the manager's cache), so a peer
// registered later is reached without a restart; clients are kept per entry
// so connections are reused.
type SecretPeers struct {
	Reader      client.Reader
	Namespace   string
	SecretName  string
	TLS         *tls.Config // verifies the peers' certificates
	CallTimeout time.Duration

	mu      sync.Mutex
	clients map[[sha256.Size]byte]*storageapi.Client
}

var _ core.Peers = (*SecretPeers)(nil)

// peers builds the storage-API view of every peer the secret lists now.
func (p *SecretPeers) peers() (storageapi.Peers, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var secret corev1.Secret
	if err := p.Reader.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: p.SecretName}, &secret); err != nil {
		return storageapi.Peers{}, fmt.Errorf("failed to read the CSI secret %s/%s: %w: %w", p.Namespace, p.SecretName, chain.ErrUnreachable, err)
	}
	clusters, err := storageapi.ParseClusters(secret.Data[storageapi.SecretKey])
	if err != nil {
		return storageapi.Peers{}, fmt.Errorf("the CSI secret %s/%s: %w: %w", p.Namespace, p.SecretName, chain.ErrUnreachable, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clients == nil {
		p.clients = map[[sha256.Size]byte]*storageapi.Client{}
	}
	out := storageapi.Peers{Clusters: map[chain.ClusterID]storageapi.Cluster{}, CallTimeout: p.CallTimeout}
	for _, e := range clusters.Entries {
		if e.Local {
			continue
		}
		key := sha256.Sum256([]byte(string(e.ID) + "\x00" + e.Endpoint + "\x00" + e.Secret))
		c, ok := p.clients[key]
		if !ok {
			if c, err = storageapi.NewClient(storageapi.ClientConfig{ID: e.ID, Endpoint: e.Endpoint, Secret: e.Secret,
				TLS: p.TLS, CallTimeout: p.CallTimeout}); err != nil {
				return storageapi.Peers{}, fmt.Errorf("peer %s: %w", e.ID, err)
			}
			p.clients[key] = c
		}
		out.Clusters[e.ID] = c
	}
	return out, nil
}

func (p *SecretPeers) Handover(source chain.Ref) (core.Handover, error) {
	ps, err := p.peers()
	if err != nil {
		return core.Handover{}, err
	}
	return ps.Handover(source)
}

func (p *SecretPeers) LearnSuccessor(member, successor chain.Ref) error {
	ps, err := p.peers()
	if err != nil {
		return err
	}
	return ps.LearnSuccessor(member, successor)
}

func (p *SecretPeers) PrepareReceive(target chain.ClusterID, request core.ReceiveRequest) ([]core.Receiver, error) {
	ps, err := p.peers()
	if err != nil {
		return nil, err
	}
	return ps.PrepareReceive(target, request)
}

func (p *SecretPeers) Holdings(cluster chain.ClusterID, root chain.Ref) ([]string, error) {
	ps, err := p.peers()
	if err != nil {
		return nil, err
	}
	return ps.Holdings(cluster, root)
}
