package site_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
)

// The out-of-service taint on a Kubernetes Node fences the storage node of
// the same name, in its StorageNode's status, and its removal unfences it;
// other taints and Nodes that are no storage node change nothing.
func TestTheOutOfServiceTaintFencesTheStorageNode(t *testing.T) {
	c := apiServer(t)
	ns := newNamespace(t, c)
	rig := newOperatorRig(t, c, ns)
	rig.step()
	r := &sitecontroller.NodeFencingReconciler{Client: c, Local: rig.op.Local()}
	ctx := testContext(t)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a1"}}
	stranger := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "not-a-storage-node-" + ns},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: sitecontroller.OutOfServiceTaint, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}}}}
	for _, n := range []*corev1.Node{node, stranger} {
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Delete(ctx, n) })
	}
	reconcile := func(name string) {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Name: name}}); err != nil {
			t.Fatalf("reconcile %s: %v", name, err)
		}
	}
	fenced := func() bool {
		t.Helper()
		var o v1.StorageNode
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a1"}, &o); err != nil {
			t.Fatal(err)
		}
		return o.Status.Fenced
	}
	taint := func(taints ...corev1.Taint) {
		t.Helper()
		if err := c.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
			t.Fatal(err)
		}
		node.Spec.Taints = taints
		if err := c.Update(ctx, node); err != nil {
			t.Fatal(err)
		}
		reconcile(node.Name)
	}

	reconcile(stranger.Name) // no storage node of that name: ignored
	taint(corev1.Taint{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute})
	if fenced() {
		t.Fatal("an unreachable node is fenced: only the out-of-service taint says it is down")
	}
	taint(corev1.Taint{Key: sitecontroller.OutOfServiceTaint, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute})
	if !fenced() {
		t.Fatal("the out-of-service taint did not fence the storage node")
	}
	rig.step() // the node's next report keeps the fence
	if !fenced() {
		t.Fatal("a node report unfenced the storage node")
	}
	taint()
	if fenced() {
		t.Fatal("removing the taint did not unfence the storage node")
	}
	if err := c.Delete(ctx, node); err != nil {
		t.Fatal(err)
	}
	reconcile(node.Name) // a deleted Node changes nothing
}
