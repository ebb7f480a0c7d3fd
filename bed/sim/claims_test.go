package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/storage/chain"
)

func newClaimsWorld(t *testing.T, seed uint64) *World {
	t.Helper()
	w, err := New(Options{Seed: seed, Scenario: "test/claims", Records: CRDRecords, Claims: true})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// deployProtected deploys a WordPress on site-a with claims, protects it
// and lets it write for two minutes.
func deployProtected(t *testing.T, w *World) *apps.App {
	t.Helper()
	if err := w.Deploy(bed.App{Name: "wordpress", Kind: bed.WordPress, Site: "site-a"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Protect("wordpress"); err != nil {
		t.Fatal(err)
	}
	w.Run(2 * time.Minute)
	a, err := w.apps.App("wordpress")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// filesVolume is the application's volume of files.
func filesVolume(t *testing.T, a *apps.App) apps.Volume {
	t.Helper()
	for _, v := range a.Volumes {
		if v.Files {
			return v
		}
	}
	t.Fatalf("%s has no volume of files", a.Spec.Name)
	return apps.Volume{}
}

// carried is the filesystem the device of the chain's member on site
// carries, read on the node that holds its primary role.
func carried(t *testing.T, w *World, site string, handle string) string {
	t.Helper()
	root, err := chain.ParseRef(handle)
	if err != nil {
		t.Fatal(err)
	}
	s := w.Site(site)
	member, err := w.attachedMember(s.Node("node-1"), root.String())
	node := s.Node("node-1")
	if err != nil {
		node = s.Node("node-2")
		if member, err = w.attachedMember(node, root.String()); err != nil {
			t.Fatal(err)
		}
	}
	fsType, err := node.filesystemOn(devicePath("vol-" + member))
	if err != nil {
		t.Fatal(err)
	}
	return fsType
}

// TestAFilesystemTravelsWithTheDataAndARestoredClaimNamesNone: the node
// plugin formats the volume of files as its StorageClass asks (XFS); a
// relocation restores its claim on the other site with no fsType, as the
// seed saw Ramen restore one, and the clone there carries XFS, which the
// node plugin finds and mounts (rule 7).
func TestAFilesystemTravelsWithTheDataAndARestoredClaimNamesNone(t *testing.T) {
	w := newClaimsWorld(t, 3)
	a := deployProtected(t, w)
	files := filesVolume(t, a)
	if got := carried(t, w, "site-a", files.Handle); got != filesFilesystem {
		t.Fatalf("the volume of files carries %q on site-a, want %s", got, filesFilesystem)
	}
	if _, err := w.Relocate("wordpress", "site-b"); err != nil {
		t.Fatal(err)
	}
	if got := carried(t, w, "site-b", files.Handle); got != filesFilesystem {
		t.Fatalf("the clone on site-b carries %q, want %s", got, filesFilesystem)
	}
	var pv corev1.PersistentVolume
	name := "wordpress-site-b-" + files.Name
	if err := w.Site("site-b").api.store.Get(context.Background(), client.ObjectKey{Name: name}, &pv); err != nil {
		t.Fatal(err)
	}
	if pv.Spec.CSI.FSType != "" || pv.Spec.CSI.VolumeHandle != files.Handle || *pv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
		t.Fatalf("the restored PV: %+v, want the handle %s, Filesystem, no fsType", pv.Spec, files.Handle)
	}
	noViolations(t, w)
}

// TestTheKubeletRefusesAClaimInTheOtherMode: a pod holding its database
// as a device cannot start on a Filesystem claim, nor one holding files on
// a Block claim -- the kubelet's own check, which a bubble without its
// source's volumeMode fails (seed 000, 599a741).
func TestTheKubeletRefusesAClaimInTheOtherMode(t *testing.T) {
	w := newClaimsWorld(t, 1)
	a := deployProtected(t, w)
	s := w.Site("site-a")
	files := filesVolume(t, a)
	if _, err := w.capability(s, "wordpress", files); err != nil {
		t.Fatalf("the application's own claim of files: %v", err)
	}
	asDevice := files
	asDevice.Files = false
	_, err := w.capability(s, "wordpress", asDevice)
	if err == nil || !strings.Contains(err.Error(), "volumeMode Filesystem, but is specified in volumeDevices") {
		t.Fatalf("a Filesystem claim held as a device: %v, want the kubelet's refusal", err)
	}
	other := files
	other.Handle = a.Volumes[0].Handle
	if other.Handle == files.Handle {
		other.Handle = a.Volumes[1].Handle
	}
	if _, err := w.capability(s, "wordpress", other); err == nil || !strings.Contains(err.Error(), "is bound to") {
		t.Fatalf("a claim bound to another volume: %v, want a refusal", err)
	}
}

// TestADrillRunsTheOperatorsTestFailoverAndLeavesNothingBehind: the drill
// verifies the application's data in bubbles the site operator's
// TestFailover made, and once its TestFailovers are deleted no claim, PV
// or bubble is left.
func TestADrillRunsTheOperatorsTestFailoverAndLeavesNothingBehind(t *testing.T) {
	w := newClaimsWorld(t, 2)
	a := deployProtected(t, w)
	before, err := w.Site("site-b").Store.Volumes()
	if err != nil {
		t.Fatal(err)
	}
	v, err := w.Drill("wordpress", "site-b")
	if err != nil {
		t.Fatal(err)
	}
	if !v.Consistent() || len(v.Volumes) != len(a.Volumes) {
		t.Fatalf("the drill's verdict: %s", v.String())
	}
	if left := w.drillLeftovers(w.Site("site-b"), a, "drill-wordpress", nil); len(left) > 0 {
		t.Fatalf("the drill left %v", left)
	}
	after, err := w.Site("site-b").Store.Volumes()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("site-b holds %d volumes after the drill, %d before", len(after), len(before))
	}
	noViolations(t, w)
}

// TestADrillWithoutClaimsSaysWhatItNeeds: the simulation's drill runs the
// operator's TestFailover only; a world without claims cannot, and says so.
func TestADrillWithoutClaimsSaysWhatItNeeds(t *testing.T) {
	w, err := New(Options{Seed: 1, Scenario: "test/noclaims"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Deploy(bed.App{Name: "gitea", Kind: bed.Gitea, Site: "site-a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Drill("gitea", "site-b"); err == nil || !strings.Contains(err.Error(), "bed.Needs.Claims") {
		t.Fatalf("a drill without claims: %v", err)
	}
}
