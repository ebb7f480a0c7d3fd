package real

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/bed/real/webapps"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/replication"
	"github.com/baton-dr/baton/workload"
)

// The copy of an application a drill starts mounts the claims the operator
// makes for the drill's TestFailovers: each volume's bubble claim is in the
// copy's namespace, under the name the application's pods mount, and each
// TestFailover names the volume's chain by its handle (the DR site has no
// claim of it before a move). The TestFailovers are the operator's to read,
// and the run's by their label and name.
func TestDrillObjectsAreTheClaimsTheCopyMounts(t *testing.T) {
	volumes := []apps.Volume{
		{Name: workload.GiteaRepositories, Handle: "0000000a-0000-4000-8000-000000000001:00000000-0000-4000-8000-00000000000a"},
		{Name: workload.GiteaDatabase, Handle: "0000000a-0000-4000-8000-000000000001:00000000-0000-4000-8000-00000000000b"},
	}
	objects, err := webapps.GiteaObjects(webapps.GiteaSpec{Name: "gitea",
		Placement:    webapps.Placement{Namespace: "scenario-run", NodePort: 30080, ExistingClaims: true},
		Repositories: webapps.Claim{Name: workload.GiteaRepositories}, Database: webapps.Claim{Name: workload.GiteaDatabase},
		Image: "baton.local/gitea:0", AdminPassword: "abcdefghijklmnop1234"})
	if err != nil {
		t.Fatal(err)
	}
	copied := objects.Placed("drill-gitea-run", 30081)
	var mounted []string
	for _, d := range copied.Deployments {
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				mounted = append(mounted, d.Namespace+"/"+v.PersistentVolumeClaim.ClaimName)
			}
		}
	}
	var made []string
	drills := drillObjects("run", "gitea", "drill-gitea-run", volumes)
	for i, tf := range drills {
		made = append(made, tf.Spec.TargetNamespace+"/"+tf.Spec.PVCName)
		if tf.Namespace != operatorNamespace || tf.Spec.Source != volumes[i].Handle || tf.Labels["baton.dev/scenario-run"] != "run" {
			t.Errorf("TestFailover %s/%s: source %s, labels %v", tf.Namespace, tf.Name, tf.Spec.Source, tf.Labels)
		}
	}
	slices.Sort(mounted)
	slices.Sort(made)
	if !slices.Equal(mounted, made) {
		t.Errorf("the copy mounts %v, the drill makes %v", mounted, made)
	}
	if drills[0].Name == drills[1].Name || !strings.Contains(drills[0].Name, "run") {
		t.Errorf("TestFailovers named %s and %s: want one per volume, the run's", drills[0].Name, drills[1].Name)
	}
}

// Production replicated through a drill when each of its volumes shipped
// from its site after the drill began: a shipment before it, one the other
// way, or one of another chain's volume does not count.
func TestUnshippedWaitsForEveryVolume(t *testing.T) {
	ref := func(s string) chain.Ref {
		r, err := chain.ParseRef(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	db := ref("0000000a-0000-4000-8000-000000000001:00000000-0000-4000-8000-00000000000a")
	uploads := ref("0000000a-0000-4000-8000-000000000001:00000000-0000-4000-8000-00000000000b")
	other := ref("0000000a-0000-4000-8000-000000000001:00000000-0000-4000-8000-00000000000c")
	a := &apps.App{Site: "site-a", Volumes: []apps.Volume{{Name: "db", Handle: db.String()}, {Name: "uploads", Handle: uploads.String()}}}
	records := bed.Records{db: {{Ref: db, Root: db}}, uploads: {{Ref: uploads, Root: uploads}}, other: {{Ref: other, Root: other}}}
	since := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	syncs := []reports.Sync{
		{Volume: string(db.Volume), From: "site-a", To: "site-b", At: since.Add(time.Second)},
		{Volume: string(uploads.Volume), From: "site-a", To: "site-b", At: since.Add(-time.Second)},
		{Volume: string(uploads.Volume), From: "site-b", To: "site-a", At: since.Add(time.Second)},
		{Volume: string(other.Volume), From: "site-a", To: "site-b", At: since.Add(time.Second)},
	}
	if got := unshipped(a, records, syncs, since); !slices.Equal(got, []string{"uploads"}) {
		t.Errorf("not shipped: %v, want [uploads]", got)
	}
	syncs = append(syncs, reports.Sync{Volume: string(uploads.Volume), From: "site-a", To: "site-b", At: since.Add(2 * time.Second)})
	if got := unshipped(a, records, syncs, since); len(got) != 0 {
		t.Errorf("not shipped: %v, want every volume shipped", got)
	}
}

// A stalled shipment's violation tells where the pairing stands: its phase,
// the snapshot in flight, and the last failure.
func TestDescribePairingsNamesTheStall(t *testing.T) {
	db, err := chain.ParseRef("0000000a-0000-4000-8000-000000000001:00000000-0000-4000-8000-00000000000a")
	if err != nil {
		t.Fatal(err)
	}
	uploads, err := chain.ParseRef("0000000a-0000-4000-8000-000000000001:00000000-0000-4000-8000-00000000000b")
	if err != nil {
		t.Fatal(err)
	}
	a := &apps.App{Site: "site-a", Volumes: []apps.Volume{{Name: "db", Handle: db.String()}, {Name: "uploads", Handle: uploads.String()}}}
	records := bed.Records{db: {{Ref: db, Root: db}}, uploads: {{Ref: uploads, Root: uploads}}}
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	stalled := core.Pairing{Pairing: replication.Pairing{
		Source: db, Target: "site-b-id", Phase: replication.Shipping, Due: now.Add(time.Minute),
		Snapshots: []replication.Snapshot{{Name: "baton-000001"}, {Name: "baton-000002"}},
		Last:      replication.Sync{Snapshot: "baton-000001"}, Failures: 3, LastError: "receive: no space left on device",
	}}
	got := describePairings(a, []string{"db"}, records, []core.Pairing{stalled}, now)
	want := "db: 00000000-0000-4000-8000-00000000000a→site-b-id Shipping, 2 snapshots, last shipped baton-000001, shipping baton-000002, next due in 1m0s, 3 failures, the last: receive: no space left on device"
	if got != want {
		t.Errorf("described\n%s\nwant\n%s", got, want)
	}
	if got := describePairings(a, []string{"uploads"}, records, []core.Pairing{stalled}, now); got != "uploads: no pairing" {
		t.Errorf("described %q, want uploads: no pairing", got)
	}
}
