package storageapi_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storageapi"
)

const secretValue = "Zm9vYmFyLXNlY3JldC10b2tlbg"

func doc(entries ...string) string { return `{"clusters":[` + strings.Join(entries, ",") + `]}` }

func entry(id, endpoint, secret string, local bool) string {
	return fmt.Sprintf(`{"cluster_id":%q,"cluster_endpoint":%q,"cluster_secret":%q,"local":%v}`, id, endpoint, secret, local)
}

func TestParseClusters(t *testing.T) {
	a := entry(string(clusterA), "https://a.example:8443", secretValue, true)
	b := entry(string(clusterB), "https://b.example", secretValue+"b", false)
	c, err := storageapi.ParseClusters([]byte(doc(b, a)))
	must(t, err)
	if ids := c.IDs(); len(ids) != 2 || ids[0] != clusterA || ids[1] != clusterB {
		t.Errorf("IDs = %v, want sorted [A B]", ids)
	}
	if local := c.Local(); len(local) != 1 || local[0] != clusterA {
		t.Errorf("Local = %v, want [A]", local)
	}
	if e, ok := c.Entry(clusterB); !ok || e.Endpoint != "https://b.example" || e.Local {
		t.Errorf("Entry(B) = %v, %v", e, ok)
	}
	if s := fmt.Sprintf("%v %+v %#v %s", c, c, c, c.Entries[0]); strings.Contains(s, secretValue) {
		t.Errorf("formatting the clusters prints a secret: %s", s)
	}

	tests := []struct {
		name, doc, says string
	}{
		{"empty", ``, "empty or truncated"},
		{"not JSON", `{"clusters":[{"cluster_id":"` + secretValue, "truncated"},
		{"syntax", `{"clusters":[{"cluster_secret":` + secretValue + `}]}`, "near byte"},
		{"no clusters", `{"clusters":[]}`, "lists no cluster"},
		{"unknown field", doc(strings.Replace(a, `"local"`, `"locale"`, 1)), `unknown field "locale"`},
		{"wrong type", doc(strings.Replace(a, `"local":true`, `"local":"yes"`, 1)), `"clusters.local"`},
		{"uppercase UUID", doc(entry(strings.ToUpper(string(clusterA)), "https://a", "s", true)), "entry 0: cluster_id must be a lowercase UUID"},
		{"secret in the id", doc(entry(secretValue, "https://a", "s", true)), "cluster_id must be a lowercase UUID"},
		{"http endpoint", doc(entry(string(clusterA), "http://a", secretValue, true)), "must be an https:// URL"},
		{"endpoint with user info", doc(entry(string(clusterA), "https://u:"+secretValue+"@a", "s", true)), "without user info"},
		{"no endpoint", doc(entry(string(clusterA), "", "s", true)), "cluster_endpoint: empty"},
		{"empty secret", doc(entry(string(clusterA), "https://a", "  ", true)), "cluster_secret is empty"},
		{"duplicate", doc(a, a), "entry 1: cluster " + string(clusterA) + " is listed twice"},
		{"two problems", doc(entry("x", "http://a", "", false)), "cluster_secret is empty"},
		{"trailing", doc(a) + `{}`, "trailing data"},
		{"huge", doc(entry(string(clusterA), "https://a", strings.Repeat("s", 70<<10), true)), "more than"},
	}
	for _, tt := range tests {
		_, err := storageapi.ParseClusters([]byte(tt.doc))
		if !errors.Is(err, storageapi.ErrClusters) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: %v, want ErrClusters saying %q", tt.name, err, tt.says)
			continue
		}
		if strings.Contains(err.Error(), secretValue) {
			t.Errorf("%s: the error quotes the secret: %v", tt.name, err)
		}
	}
	if _, err := storageapi.ClustersFromSecrets(map[string]string{"other": doc(a)}); !errors.Is(err, storageapi.ErrNoClusters) {
		t.Errorf("secrets without the clusters key: %v, want ErrNoClusters", err)
	}
	if c, err := storageapi.ClustersFromSecrets(map[string]string{storageapi.SecretKey: doc(a)}); err != nil || len(c.Entries) != 1 {
		t.Errorf("ClustersFromSecrets = %v, %v", c, err)
	}
}

// FuzzParseClusters: whatever the document, the parser either accepts a
// valid configuration or refuses with ErrClusters -- and a refusal never
// quotes a cluster_secret of the document.
func FuzzParseClusters(f *testing.F) {
	f.Add([]byte(doc(entry(string(clusterA), "https://a.example", secretValue, true))))
	f.Add([]byte(doc(entry(string(clusterA), "https://a", secretValue, true), entry(string(clusterA), "http://b", "", false))))
	f.Add([]byte(`{"clusters":[{"cluster_secret":"` + secretValue + `","cluster_id":7}]}`))
	f.Add([]byte(`{"clusters":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := storageapi.ParseClusters(data)
		if err != nil {
			if !errors.Is(err, storageapi.ErrClusters) {
				t.Fatalf("refusal %v is not ErrClusters", err)
			}
			for _, secret := range secretsIn(data) {
				if len(secret) >= 6 && strings.Contains(err.Error(), secret) {
					t.Fatalf("the error %q quotes the secret %q", err, secret)
				}
			}
			return
		}
		seen := map[chain.ClusterID]bool{}
		for _, e := range c.Entries {
			if !chain.IsUUID(string(e.ID)) || !strings.HasPrefix(e.Endpoint, "https://") || strings.TrimSpace(e.Secret) == "" || seen[e.ID] {
				t.Fatalf("accepted an invalid entry %v", e)
			}
			seen[e.ID] = true
		}
	})
}

// secretsIn digs the cluster_secret values out of a document, leniently.
func secretsIn(data []byte) []string {
	var loose struct {
		Clusters []struct {
			Secret string `json:"cluster_secret"`
		} `json:"clusters"`
	}
	if json.Unmarshal(data, &loose) != nil {
		return nil
	}
	var out []string
	for _, c := range loose.Clusters {
		out = append(out, c.Secret)
	}
	return out
}
