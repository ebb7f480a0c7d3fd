package storageapi

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/baton-dr/baton/storage/chain"
)

// SecretKey is the key of the Kubernetes Secret (and of a CSI request's
// secrets) that holds the clusters document.
const SecretKey = "clusters"

// maxClustersBytes bounds the clusters document; a few clusters take a few
// hundred bytes.
const maxClustersBytes = 64 << 10

var (
	// ErrNoClusters: the secrets carry no clusters document.
	ErrNoClusters = errors.New("no clusters secret")
	// ErrClusters: the clusters document is malformed. Its messages never
	// quote a secret.
	ErrClusters = errors.New("invalid clusters secret")
)

// ClusterEntry is one storage cluster of the clusters secret.
type ClusterEntry struct {
	ID       chain.ClusterID `json:"cluster_id"`
	Endpoint string          `json:"cluster_endpoint"`
	Secret   string          `json:"cluster_secret"`
	// Local marks a cluster this site's operator manages; the others were
	// registered by peer sites for cross-cluster handle resolution.
	Local bool `json:"local"`
}

// String leaves the secret out, so that no log line or %v carries it.
func (e ClusterEntry) String() string {
	return fmt.Sprintf("cluster %s at %s (local=%v)", e.ID, e.Endpoint, e.Local)
}

// GoString leaves the secret out of %#v as well.
func (e ClusterEntry) GoString() string { return e.String() }

// Clusters is the clusters secret:
// {"clusters":[{"cluster_id","cluster_endpoint","cluster_secret","local":true}]}.
type Clusters struct {
	Entries []ClusterEntry `json:"clusters"`
}

// ParseClusters reads and validates the clusters document: at least one
// entry, canonical lowercase UUIDs, https endpoints, non-empty secrets, no
// cluster twice, no field it does not know. Entries come back sorted by ID.
func ParseClusters(data []byte) (Clusters, error) {
	if len(data) > maxClustersBytes {
		return Clusters{}, fmt.Errorf("%w: %d bytes, more than %d", ErrClusters, len(data), maxClustersBytes)
	}
	c, err := decodeStrict[Clusters](data)
	if err != nil {
		// decodeStrict's messages name offsets and fields, never values.
		return Clusters{}, fmt.Errorf("%w: %s", ErrClusters, strings.TrimPrefix(err.Error(), "invalid request: "))
	}
	if len(c.Entries) == 0 {
		return Clusters{}, fmt.Errorf("%w: it lists no cluster", ErrClusters)
	}
	var problems []error
	seen := map[chain.ClusterID]bool{}
	for i, e := range c.Entries {
		if err := e.validate(); err != nil {
			problems = append(problems, fmt.Errorf("entry %d: %w", i, err))
		}
		if seen[e.ID] && e.ID != "" {
			problems = append(problems, fmt.Errorf("entry %d: cluster %s is listed twice", i, e.ID))
		}
		seen[e.ID] = true
	}
	if err := errors.Join(problems...); err != nil {
		return Clusters{}, fmt.Errorf("%w: %w", ErrClusters, err)
	}
	slices.SortFunc(c.Entries, func(a, b ClusterEntry) int { return cmp.Compare(a.ID, b.ID) })
	return c, nil
}

func (e ClusterEntry) validate() error {
	var problems []error
	if !chain.IsUUID(string(e.ID)) {
		// A malformed ID is not echoed: a misplaced secret may sit in it.
		problems = append(problems, errors.New("cluster_id must be a lowercase UUID"))
	}
	if _, err := checkEndpoint(e.Endpoint); err != nil {
		problems = append(problems, fmt.Errorf("cluster_endpoint: %s", endpointProblem(e.Endpoint)))
	}
	if strings.TrimSpace(e.Secret) == "" {
		problems = append(problems, errors.New("cluster_secret is empty"))
	}
	return errors.Join(problems...)
}

// endpointProblem says what is wrong with an endpoint without quoting it: a
// misplaced secret may sit in it.
func endpointProblem(endpoint string) string {
	switch {
	case endpoint == "":
		return "empty"
	case !strings.HasPrefix(endpoint, "https://"):
		return "must be an https:// URL (the bearer token is a cluster secret)"
	}
	return "must be https://host[:port][/path] without user info, query or fragment"
}

// ClustersFromSecrets reads the clusters document from a CSI request's
// secrets. ErrNoClusters when the key is absent.
func ClustersFromSecrets(secrets map[string]string) (Clusters, error) {
	data, ok := secrets[SecretKey]
	if !ok {
		return Clusters{}, fmt.Errorf("%w: the secrets have no %q key", ErrNoClusters, SecretKey)
	}
	return ParseClusters([]byte(data))
}

// Local lists the clusters marked local, sorted.
func (c Clusters) Local() []chain.ClusterID {
	var out []chain.ClusterID
	for _, e := range c.Entries {
		if e.Local {
			out = append(out, e.ID)
		}
	}
	return out
}

// IDs lists every cluster, sorted.
func (c Clusters) IDs() []chain.ClusterID {
	out := make([]chain.ClusterID, 0, len(c.Entries))
	for _, e := range c.Entries {
		out = append(out, e.ID)
	}
	return out
}

// Entry returns the entry of cluster id.
func (c Clusters) Entry(id chain.ClusterID) (ClusterEntry, bool) {
	i := slices.IndexFunc(c.Entries, func(e ClusterEntry) bool { return e.ID == id })
	if i < 0 {
		return ClusterEntry{}, false
	}
	return c.Entries[i], true
}
