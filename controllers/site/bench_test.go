package site_test

import (
	"fmt"
	"testing"

	"github.com/baton-dr/baton/storage/core"
)

// BenchmarkStore measures the CRD store on the fake client over a site of
// 100 members: a put that changes a record (dry runs and both writes), a put
// that changes nothing (one read), and a list of every member. It measures
// the store's own work (rendering, comparing, converting), not an API server.
func BenchmarkStore(b *testing.B) {
	s := newStore(b, fakeClient(b), "baton")
	base := volumeTable()[1]
	var volumes []core.Volume
	for i := range 100 {
		v := base
		v.Ref, v.Name = ref(clusterA, 5000+i), fmt.Sprintf("pvc-%d", i)
		if err := s.PutVolume(v); err != nil {
			b.Fatal(err)
		}
		volumes = append(volumes, v)
	}
	b.Run("put-changed", func(b *testing.B) {
		v := volumes[0]
		for i := range b.N {
			v.Snapshots = []core.SnapshotInfo{{Name: fmt.Sprintf("baton-%06d", i), GUID: fmt.Sprint(i)}}
			if err := s.PutVolume(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("put-unchanged", func(b *testing.B) {
		for range b.N {
			if err := s.PutVolume(volumes[1]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("list-100", func(b *testing.B) {
		for range b.N {
			if _, err := s.Volumes(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
