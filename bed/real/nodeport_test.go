package real

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/baton-dr/baton/bed/controlplane/controlplanetest"
	"github.com/baton-dr/baton/bed/real/infra"
)

// TestAnApplicationTakesANodePortNoServiceHolds: the previous run's
// namespace may still be going, its Services holding their NodePorts; the
// next application takes the lowest port from webNodePort that no Service
// on either site holds, nor another application of the bed, instead of
// waiting for that namespace to go.
func TestAnApplicationTakesANodePortNoServiceHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	client, err := kubernetes.NewForConfig(controlplanetest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	hold := func(namespace string, port int32) {
		t.Helper()
		if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: namespace}, Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Port: 80, NodePort: port}},
		}}
		if _, err := client.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hold("scenario-previous", webNodePort)
	hold("scenario-other", webNodePort+2)
	// Both sites on one API server: what one holds, the other does too.
	sites := []*site{{Cluster: infra.Cluster{Name: "a"}, client: client}, {Cluster: infra.Cluster{Name: "b"}, client: client}}
	b := &Bed{held: map[string]*app{}, sites: sites, run: newRun()}
	defer b.releaseNodePorts()
	if port, err := b.freeNodePort(ctx); err != nil || port != webNodePort+1 {
		t.Fatalf("got %d, %v; want %d, the lowest port no Service holds", port, err, webNodePort+1)
	}
	b.held["wordpress"] = &app{web: &webApp{nodePort: webNodePort + 1}}
	if port, err := b.freeNodePort(ctx); err != nil || port != webNodePort+3 {
		t.Fatalf("got %d, %v; want %d, past the bed's own application", port, err, webNodePort+3)
	}
	// A bed beside it in the process, before either made a Service: the
	// ports the first took are not the second's.
	beside := &Bed{held: map[string]*app{}, sites: sites, run: newRun()}
	defer beside.releaseNodePorts()
	if port, err := beside.freeNodePort(ctx); err != nil || port != webNodePort+4 {
		t.Fatalf("got %d, %v; want %d, past the ports the bed beside took", port, err, webNodePort+4)
	}
	b.releaseNodePorts()
	if port, err := beside.freeNodePort(ctx); err != nil || port != webNodePort+1 {
		t.Fatalf("got %d, %v; want %d, given back when the first bed closed", port, err, webNodePort+1)
	}
}
