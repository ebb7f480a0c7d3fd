package reportstest

import (
	"fmt"
	"time"

	"github.com/baton-dr/baton/reports"
)

// Cluster UUIDs of the sample sites: volume handles and member refs are
// "<cluster-uuid>:<volume-uuid>", as in production.
const (
	clusterA = "6f1c9a52-3d4e-4b8a-9c07-1e2f3a4b5c6d"
	clusterB = "b07e4d21-8f3a-4c6b-a1d2-7e8f9a0b1c2d"
)

func clusterOf(site string) string {
	if site == siteA {
		return clusterA
	}
	return clusterB
}

// other returns the peer of a site.
func other(site string) string {
	if site == siteA {
		return siteB
	}
	return siteA
}

// volumeUUID derives a stable volume UUID from a volume name and generation.
func volumeUUID(volume string, generation int) string {
	var sum uint32 = 2166136261 // FNV-1a, enough to look distinct
	for _, c := range volume {
		sum = (sum ^ uint32(c)) * 16777619
	}
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", sum, generation, generation*7%4096, sum%4096, uint64(sum)*uint64(generation+1))
}

func memberRef(site, volume string, generation int) string {
	return clusterOf(site) + ":" + volumeUUID(volume, generation)
}

// app is one protected application with its volumes.
type app struct {
	name    string
	volumes []string
}

var (
	wordpress = app{name: "wordpress", volumes: []string{"wordpress/mysql-data", "wordpress/uploads"}}
	gitea     = app{name: "gitea", volumes: []string{"gitea/repositories", "gitea/postgres-data"}}
)

// deployAndProtect runs the opening phases every scenario shares: deploy on
// site-a, then enable replication to site-b and ship a first snapshot.
func (b *builder) deployAndProtect(a app) {
	b.phase("deploy", func() (bool, string) {
		b.begin(hub, reports.EventAction, "deploy", "deploy "+a.name+" on site-a")
		b.advance(25 * time.Second)
		for _, volume := range a.volumes {
			b.event(siteA, reports.EventRole, fmt.Sprintf("%s: created %s (generation 0, active)", volume, memberRef(siteA, volume, 0)))
		}
		b.advance(10 * time.Second)
		b.end(hub, reports.EventAction, "deploy", a.name+" ready on site-a")
		return true, ""
	})
	b.phase("protect", func() (bool, string) {
		b.begin(hub, reports.EventAction, "protect", "protect "+a.name+": EnableVolumeReplication site-a -> site-b")
		b.advance(5 * time.Second)
		b.writes(siteA, a.volumes, 12*time.Second)
		b.sync(siteA, siteB, a.volumes, false)
		b.end(hub, reports.EventAction, "protect", a.name+" protected, first snapshots on site-b")
		return true, ""
	})
}

// steady runs the workload on site with a sync to the peer every ~30 s.
func (b *builder) steady(a app, site string, rounds int) {
	for range rounds {
		b.writes(site, a.volumes, 28*time.Second)
		b.sync(site, other(site), a.volumes, false)
	}
}
