package site_test

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// volumeRecords are a site's volume records as a test gives them.
type volumeRecords struct {
	volumes []core.Volume
	err     error
}

func (r volumeRecords) Volumes() ([]core.Volume, error) { return r.volumes, r.err }

// What a drill leaves is what its cleanup must remove, and nothing else:
// its TestFailover, the claims in its namespace, the PVs marked as bubbles,
// the bubble volumes -- not another namespace's claims, not an unmarked PV,
// not a volume that is no bubble of it.
func TestDrillLeftoversListWhatTheCleanupMustRemove(t *testing.T) {
	bubble, err := chain.ParseRef("0000000b-0000-4000-8000-000000000001:00000000-0000-4000-8000-0000000000bb")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := chain.ParseRef("0000000b-0000-4000-8000-000000000001:00000000-0000-4000-8000-0000000000cc")
	drill := client.ObjectKey{Namespace: "baton-system", Name: "drill-wordpress-db"}
	c := fakeClient(t,
		&v1.TestFailover{ObjectMeta: metav1.ObjectMeta{Namespace: drill.Namespace, Name: drill.Name},
			Spec: v1.TestFailoverSpec{Source: bubble.String(), TargetNamespace: "drill-wordpress", PVCName: "db"}},
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "drill-wordpress", Name: "db"}},
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "production", Name: "db"}},
		&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "baton-drill-bb",
			Labels: map[string]string{sitecontroller.DrillLabel: "baton-system.drill-wordpress-db"}}},
		&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "production-db"}},
	)
	records := volumeRecords{volumes: []core.Volume{{Member: chain.Member{Ref: bubble}}, {Member: chain.Member{Ref: other}}}}
	left := sitecontroller.DrillLeftovers(testContext(t), c, []client.ObjectKey{drill}, "drill-wordpress", records, []string{bubble.String()})
	want := []string{"TestFailover drill-wordpress-db", "PVC drill-wordpress/db", "PV baton-drill-bb", "bubble " + bubble.String()}
	if !slices.Equal(left, want) {
		t.Errorf("left behind: %q, want %q", left, want)
	}

	clean := fakeClient(t, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "production-db"}})
	if left := sitecontroller.DrillLeftovers(testContext(t), clean, []client.ObjectKey{drill}, "drill-wordpress",
		volumeRecords{volumes: records.volumes[1:]}, []string{bubble.String()}); len(left) != 0 {
		t.Errorf("a clean site: %q left behind, want nothing", left)
	}
	// Records that cannot be read are no proof the bubble is gone.
	if left := sitecontroller.DrillLeftovers(testContext(t), clean, nil, "drill-wordpress",
		volumeRecords{err: errors.New("the store does not answer")}, []string{bubble.String()}); len(left) != 1 {
		t.Errorf("unreadable records: %q, want the error as what is left", left)
	}
}
