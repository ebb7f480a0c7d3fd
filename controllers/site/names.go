package site

import (
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/baton-dr/baton/storage/chain"
)

// ClusterLabel carries, on every record object, the UUID of the storage cluster
// whose record it is: one namespace may hold the records of several clusters.
const ClusterLabel = "storage.baton.dev/cluster"

// volumeName names a local member's Volume and its Replication (the pairing
// is the member's): the volume's UUID.
func volumeName(ref chain.Ref) string { return string(ref.Volume) }

// replicaName names the Replica of another site's member: "<cluster>.<volume>",
// a DNS subdomain that sorts like the ref.
func replicaName(source chain.Ref) string {
	return string(source.Cluster) + "." + string(source.Volume)
}

func objectMeta(key types.NamespacedName) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}
}

// NewUUID draws a UUIDv4 in the canonical lower-case form from random (a
// seeded reader in tests, crypto/rand in production). A failing reader is a
// broken host: it panics.
func NewUUID(random io.Reader) string {
	var b [16]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		panic(fmt.Sprintf("site: no randomness for a UUID: %v", err))
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
