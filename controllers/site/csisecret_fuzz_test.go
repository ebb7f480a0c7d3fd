package site

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"
)

// FuzzCSISecret feeds arbitrary secret contents to the renderer: it either
// refuses them as malformed, or writes JSON whose local entries are exactly
// this site's clusters, first, and which keeps every peer entry.
func FuzzCSISecret(f *testing.F) {
	f.Add([]byte(``))
	f.Add([]byte(`{"clusters":[]}`))
	f.Add([]byte(`{"clusters":[{"cluster_id":"b","cluster_endpoint":"https://b","cluster_secret":"s","local":false}]}`))
	f.Add([]byte(`{"clusters":[{"cluster_id":"a","cluster_secret":"keep","local":true},{"cluster_id":"c","local":true}]}`))
	f.Add([]byte(`{"clusters":[1,2]}`))
	f.Add([]byte(`[]`))
	local := []string{"a"}
	f.Fuzz(func(t *testing.T, current []byte) {
		r := &CSISecretReconciler{Endpoint: "https://site-a", Random: rand.NewChaCha8([32]byte{})}
		out, err := r.render(current, local, nil)
		if errors.Is(err, ErrMalformedSecret) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		var written struct{ Clusters []csiCluster }
		if err := json.Unmarshal(out, &written); err != nil {
			t.Fatalf("wrote unparsable %s: %v", out, err)
		}
		if len(written.Clusters) == 0 || written.Clusters[0].ClusterID != "a" || !written.Clusters[0].Local ||
			written.Clusters[0].ClusterSecret == "" || written.Clusters[0].ClusterEndpoint != "https://site-a" {
			t.Fatalf("the local entry is wrong in %s", out)
		}
		var read struct{ Clusters []csiCluster }
		_ = json.Unmarshal(current, &read)
		peers := 0
		for _, c := range read.Clusters {
			if c.ClusterID != "a" && !c.Local {
				peers++
			}
		}
		for _, c := range written.Clusters[1:] {
			if c.Local || c.ClusterID == "a" {
				t.Fatalf("a second local entry in %s", out)
			}
		}
		if len(written.Clusters)-1 != peers {
			t.Fatalf("%d peer entries in, %d out:\n%s\n%s", peers, len(written.Clusters)-1, current, out)
		}
	})
}
