package controlplane_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/bed/controlplane"
)

// TestControlPlaneServesObjects starts a real kube-apiserver and etcd, writes a
// ConfigMap and reads it back through a fresh client.
func TestControlPlaneServesObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real kube-apiserver and etcd; skipped under -short")
	}
	cp, err := controlplane.Start(controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})

	version, err := discovery.NewDiscoveryClientForConfigOrDie(cp.Config).ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if version.GitVersion != "v1.37.2" {
		t.Errorf("server version = %q, want v1.37.2 (the binaries ci/controlplane/build.sh builds)", version.GitVersion)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "smoke", Namespace: "default"},
		Data:       map[string]string{"baton": "hands over"},
	}
	if err := c.Create(ctx, want); err != nil {
		t.Fatalf("create: %v", err)
	}
	reader, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.ConfigMap
	if err := reader.Get(ctx, client.ObjectKeyFromObject(want), &got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Data["baton"] != "hands over" || got.UID == "" || got.ResourceVersion == "" {
		t.Errorf("read back %+v, want the stored object with its data, uid and resource version", got)
	}
}
