package chain

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
)

// ClusterID is a storage cluster's UUID.
type ClusterID string

// VolumeID is a volume's UUID, unique within its cluster.
type VolumeID string

// Ref addresses one volume on one cluster: a chain member, and for a chain's
// root also the volume handle "<cluster-uuid>:<volume-uuid>".
type Ref struct {
	Cluster ClusterID
	Volume  VolumeID
}

// ErrMalformedRef reports a handle or member reference that is not two
// canonical UUIDs joined by a colon.
var ErrMalformedRef = errors.New("malformed volume handle")

// String renders the handle form "<cluster-uuid>:<volume-uuid>".
func (r Ref) String() string {
	if r.IsZero() {
		return ""
	}
	return string(r.Cluster) + ":" + string(r.Volume)
}

// CompareRefs orders refs by cluster, then volume: the order in which stores
// list their records.
func CompareRefs(a, b Ref) int {
	if c := cmp.Compare(a.Cluster, b.Cluster); c != 0 {
		return c
	}
	return cmp.Compare(a.Volume, b.Volume)
}

// IsZero reports whether r addresses nothing.
func (r Ref) IsZero() bool { return r == Ref{} }

// ParseRef parses "<cluster-uuid>:<volume-uuid>". Only the canonical lowercase
// 8-4-4-4-12 form is accepted: a handle is kept for ever and compared as a
// string, so one volume must have exactly one spelling.
func ParseRef(s string) (Ref, error) {
	cluster, volume, found := strings.Cut(s, ":")
	if !found {
		return Ref{}, fmt.Errorf("%w %q: want <cluster-uuid>:<volume-uuid>", ErrMalformedRef, clip(s))
	}
	if !IsUUID(cluster) {
		return Ref{}, fmt.Errorf("%w %q: cluster part is not a lowercase UUID", ErrMalformedRef, clip(s))
	}
	if !IsUUID(volume) {
		return Ref{}, fmt.Errorf("%w %q: volume part is not a lowercase UUID", ErrMalformedRef, clip(s))
	}
	return Ref{Cluster: ClusterID(cluster), Volume: VolumeID(volume)}, nil
}

// IsUUID reports whether s is a UUID in canonical lowercase 8-4-4-4-12 form.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// clip keeps error messages short when the input is hostile.
func clip(s string) string {
	const limitBytes = 80
	if len(s) <= limitBytes {
		return s
	}
	return s[:limitBytes] + "…"
}
