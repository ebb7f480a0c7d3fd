package site_test

import (
	"context"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/storage/core"
)

// TestAConflictingWriterIsRetriedAndKept: another writer (a status reconciler
// setting a condition) updates the object between the store's read and its
// write, twice. The store retries from a fresh read; its record lands, and the
// other writer's condition stays.
func TestAConflictingWriterIsRetriedAndKept(t *testing.T) {
	interfered, armed := 0, false
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithStatusSubresource(statusKinds()...).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				dryRun := slices.ContainsFunc(opts, func(o client.SubResourceUpdateOption) bool { return o == client.DryRunAll })
				if !dryRun && armed && interfered < 2 {
					interfered++
					other := &v1.Volume{}
					if err := c.Get(ctx, client.ObjectKeyFromObject(obj), other); err != nil {
						return err
					}
					meta.SetStatusCondition(&other.Status.Conditions, metav1.Condition{Type: "Other", Status: metav1.ConditionTrue,
						Reason: "Other", ObservedGeneration: int64(interfered)})
					if err := c.Status().Update(ctx, other); err != nil {
						return err
					}
				}
				return c.Status().Update(ctx, obj, opts...)
			},
		}).Build()
	s := newStore(t, c, "baton")
	v := volumeTable()[1]
	if err := s.PutVolume(v); err != nil {
		t.Fatal(err)
	}
	armed = true
	v.Snapshots = append(v.Snapshots, core.SnapshotInfo{Name: "baton-000003", GUID: "3"})
	if err := s.PutVolume(v); err != nil {
		t.Fatalf("put with two conflicting writers: %v", err)
	}
	if interfered != 2 {
		t.Fatalf("interfered %d times, want 2", interfered)
	}
	got := must(s.Volumes())
	if len(got) != 1 || dump(got[0]) != dump(v) {
		t.Fatalf("read back %s, want %s", dump(got), dump(v))
	}
	stored := &v1.Volume{}
	if err := c.Get(testContext(t), client.ObjectKey{Namespace: "baton", Name: string(v.Ref.Volume)}, stored); err != nil {
		t.Fatal(err)
	}
	if meta.FindStatusCondition(stored.Status.Conditions, "Other") == nil {
		t.Fatalf("the other writer's condition is gone: %+v", stored.Status.Conditions)
	}
}
