package site

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// ErrUnknownNode reports a node that has no StorageNode of the cluster: nodes
// join through the deployment flow, never by reporting.
var ErrUnknownNode = errors.New("no StorageNode of this cluster")

// StoreConfig configures a Store.
type StoreConfig struct {
	// Client writes. Reader reads; it must not be a cache (a record read right
	// after its write must be the one written): the manager's APIReader, or
	// nil to read through Client.
	Client client.Client
	Reader client.Reader
	// Namespace holds the records.
	Namespace string
	// Cluster is the storage cluster whose records these are; ClusterName is
	// its StorageCluster's name, which its StorageNodes name.
	Cluster     chain.ClusterID
	ClusterName string
	// Context bounds every call (the core's Store interface takes none);
	// CallTimeout bounds each one, 30 s when zero.
	Context     context.Context
	CallTimeout time.Duration
	// OnSync, when set, is told of every pairing written whose last sync
	// differs from the one stored: the metrics count shipped bytes from it.
	OnSync func(core.Pairing)
}

// Store is a core.Store kept in CRDs: members in Volumes, pairings in
// Replications, replicas in Replicas, nodes in StorageNodes. Every record reads
// back exactly as it was put; a record a CRD cannot hold, or that its
// validation refuses, is an error and changes nothing (see write).
//
// A Volume or a Replication whose status was never written -- its create
// wrote the object, the status write failed, and so did the delete that
// undoes it -- holds no record yet and reads as absent: every other record
// stays readable, and the operation that wrote it sees its write as not made,
// so that run again it writes the record whole (write's update path
// completes the object). This is what the core's multi-record changes rely
// on: a write that failed is a write not made, or one made whole (a 500
// after etcd committed). A Replica without its status is a valid record
// (nothing received yet).
type Store struct {
	client      client.Client
	reader      client.Reader
	namespace   string
	cluster     chain.ClusterID
	clusterName string
	ctx         context.Context
	callTimeout time.Duration
	onSync      func(core.Pairing)
}

var _ core.Store = (*Store)(nil)

// NewStore returns the store config describes.
func NewStore(config StoreConfig) (*Store, error) {
	switch {
	case config.Client == nil || config.Context == nil:
		return nil, fmt.Errorf("a store needs a client and a context")
	case config.Namespace == "" || config.ClusterName == "":
		return nil, fmt.Errorf("a store needs a namespace and its StorageCluster's name")
	case !chain.IsUUID(string(config.Cluster)):
		return nil, fmt.Errorf("cluster %q is not a UUID", config.Cluster)
	}
	s := &Store{client: config.Client, reader: config.Reader, namespace: config.Namespace, cluster: config.Cluster,
		clusterName: config.ClusterName, ctx: config.Context, callTimeout: config.CallTimeout, onSync: config.OnSync}
	if s.reader == nil {
		s.reader = config.Client
	}
	if s.callTimeout <= 0 {
		s.callTimeout = 30 * time.Second
	}
	return s, nil
}

func (s *Store) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: s.namespace, Name: name}
}

func (s *Store) labelled(o client.Object) bool {
	return o.GetLabels()[ClusterLabel] == string(s.cluster)
}

// list reads the objects of one kind that hold this cluster's records.
func (s *Store) list(list client.ObjectList) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.callTimeout)
	defer cancel()
	return s.reader.List(ctx, list, client.InNamespace(s.namespace), client.MatchingLabels{ClusterLabel: string(s.cluster)})
}

// remove deletes one record's object, if it is this cluster's.
func (s *Store) remove(what string, o client.Object) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.callTimeout)
	defer cancel()
	err := s.reader.Get(ctx, client.ObjectKeyFromObject(o), o)
	if apierrors.IsNotFound(err) || (err == nil && !s.labelled(o)) {
		return fmt.Errorf("%s: %w", what, core.ErrStoreNotFound)
	}
	if err != nil {
		return fmt.Errorf("failed to read %s: %w", what, err)
	}
	uid := o.GetUID()
	err = s.client.Delete(ctx, o, client.Preconditions{UID: &uid})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s: %w", what, core.ErrStoreNotFound)
	}
	if err != nil {
		return fmt.Errorf("failed to delete %s: %w", what, err)
	}
	return nil
}

// records converts the items of a list that keep takes into the core's
// records, sorted by compare; an item that does not convert fails the whole.
func records[T, R any](items []T, keep func(*T) bool, convert func(*T) (R, error), compare func(a, b R) int) ([]R, error) {
	out := make([]R, 0, len(items))
	for i := range items {
		if !keep(&items[i]) {
			continue
		}
		r, err := convert(&items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	slices.SortFunc(out, compare)
	return out, nil
}

func (s *Store) Volumes() ([]core.Volume, error) {
	var list v1.VolumeList
	if err := s.list(&list); err != nil {
		return nil, fmt.Errorf("failed to list volumes: %w", err)
	}
	return records(list.Items,
		func(v *v1.Volume) bool { return v.Status.State != "" }, // else an unfinished create (Store's comment)
		func(v *v1.Volume) (core.Volume, error) { return volumeRecord(s.cluster, v) },
		func(a, b core.Volume) int { return chain.CompareRefs(a.Ref, b.Ref) })
}

func (s *Store) PutVolume(v core.Volume) error {
	if v.Ref.Cluster != s.cluster {
		return fmt.Errorf("%w: volume %s is not of cluster %s", ErrForeignRecord, v.Ref, s.cluster)
	}
	return s.write(record{what: "volume " + v.Ref.String(), key: s.key(volumeName(v.Ref)),
		empty:  func() client.Object { return &v1.Volume{} },
		render: func(o client.Object) error { return renderVolume(o.(*v1.Volume), v) },
		owned:  s.labelled})
}

func (s *Store) RemoveVolume(ref chain.Ref) error {
	if ref.Cluster != s.cluster {
		return fmt.Errorf("volume %s: %w", ref, core.ErrStoreNotFound)
	}
	return s.remove("volume "+ref.String(), &v1.Volume{ObjectMeta: objectMeta(s.key(volumeName(ref)))})
}

func (s *Store) Replicas() ([]core.Replica, error) {
	var list v1.ReplicaList
	if err := s.list(&list); err != nil {
		return nil, fmt.Errorf("failed to list replicas: %w", err)
	}
	return records(list.Items, func(*v1.Replica) bool { return true }, replicaRecord,
		func(a, b core.Replica) int { return chain.CompareRefs(a.Source, b.Source) })
}

func (s *Store) PutReplica(r core.Replica) error {
	return s.write(record{what: "replica of " + r.Source.String(), key: s.key(replicaName(r.Source)),
		empty:  func() client.Object { return &v1.Replica{} },
		render: func(o client.Object) error { return renderReplica(o.(*v1.Replica), r) },
		owned:  s.labelled})
}

func (s *Store) RemoveReplica(source chain.Ref) error {
	return s.remove("replica of "+source.String(), &v1.Replica{ObjectMeta: objectMeta(s.key(replicaName(source)))})
}

func (s *Store) Pairings() ([]core.Pairing, error) {
	var list v1.ReplicationList
	if err := s.list(&list); err != nil {
		return nil, fmt.Errorf("failed to list replications: %w", err)
	}
	return records(list.Items,
		func(r *v1.Replication) bool { return r.Status.Cycle != nil }, // else an unfinished create (Store's comment)
		pairingRecord,
		func(a, b core.Pairing) int { return chain.CompareRefs(a.Source, b.Source) })
}

func (s *Store) PutPairing(p core.Pairing) error {
	if p.Source.Cluster != s.cluster {
		return fmt.Errorf("%w: pairing of %s is not of cluster %s", ErrForeignRecord, p.Source, s.cluster)
	}
	synced := false
	err := s.write(record{what: "pairing of " + p.Source.String(), key: s.key(volumeName(p.Source)),
		empty: func() client.Object { return &v1.Replication{} },
		render: func(o client.Object) error {
			r := o.(*v1.Replication)
			synced = !p.Last.At.IsZero() && (r.Status.Cycle == nil || r.Status.Cycle.LastSync.At != v1.NewTimestamp(p.Last.At))
			return renderPairing(r, p)
		},
		owned: s.labelled})
	if err == nil && synced && s.onSync != nil {
		s.onSync(p)
	}
	return err
}

func (s *Store) RemovePairing(source chain.Ref) error {
	if source.Cluster != s.cluster {
		return fmt.Errorf("pairing of %s: %w", source, core.ErrStoreNotFound)
	}
	return s.remove("pairing of "+source.String(), &v1.Replication{ObjectMeta: objectMeta(s.key(volumeName(source)))})
}

// Nodes lists the records of the cluster's StorageNodes, sorted by name.
func (s *Store) Nodes() ([]core.Node, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.callTimeout)
	defer cancel()
	var list v1.StorageNodeList
	if err := s.reader.List(ctx, &list, client.InNamespace(s.namespace)); err != nil {
		return nil, fmt.Errorf("failed to list storage nodes: %w", err)
	}
	var out []core.Node
	for i := range list.Items {
		if list.Items[i].Spec.Cluster != s.clusterName {
			continue
		}
		n, err := nodeRecord(&list.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b core.Node) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// PutNode updates a node's record on its StorageNode, which must exist.
func (s *Store) PutNode(n core.Node) error {
	return s.write(record{what: "node " + n.Name, key: s.key(n.Name),
		empty:  func() client.Object { return &v1.StorageNode{} },
		render: func(o client.Object) error { return renderNode(o.(*v1.StorageNode), n) },
		owned:  func(o client.Object) bool { return o.(*v1.StorageNode).Spec.Cluster == s.clusterName },
		noCreate: fmt.Errorf("%w %s: node %q (nodes join through the deployment flow)",
			ErrUnknownNode, s.clusterName, n.Name)})
}
