package infra

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// startingAPIServer is a test double of a fresh or loaded cluster's API
// server (a real one's etcd check cannot be made to fail on demand): /readyz
// gets no HTTP answer for the first unanswered asks (as from a server not
// serving yet, or a bed that is down), then answers 500 with etcd's check
// failing for the next notReady asks, then ok; the node and kube-system's
// one pod are Ready.
func startingAPIServer(t *testing.T, unanswered, notReady int32) (kubernetes.Interface, *atomic.Int32) {
	t.Helper()
	var asked atomic.Int32
	ready := []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	podReady := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	answer := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz":
			n := asked.Add(1)
			if n <= unanswered {
				hangUp(t, w)
				return
			}
			if n <= unanswered+notReady {
				http.Error(w, "[-]etcd failed: reason withheld\nreadyz check failed", http.StatusInternalServerError)
				return
			}
			_, _ = w.Write([]byte("ok"))
		case "/api/v1/nodes":
			answer(w, corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"},
				Items: []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Conditions: ready}}}})
		case "/api/v1/namespaces/kube-system/pods":
			answer(w, corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"},
				Items: []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "etcd-n"}, Status: corev1.PodStatus{Conditions: podReady}}}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(server.Close)
	client, err := kubernetes.NewForConfig(&rest.Config{Host: server.URL})
	if err != nil {
		t.Fatal(err)
	}
	return client, &asked
}

// hangUp answers a request with bytes that are not HTTP and closes the
// connection: the client gets no HTTP status, as from a server that is not
// there (a closed connection would be retried by client-go on its own).
func hangUp(t *testing.T, w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Error(err)
		return
	}
	_, _ = conn.Write([]byte("no HTTP here\r\n\r\n"))
	_ = conn.Close()
}

// TestReadinessRetriesAnAPIServerThatIsNotReadyYet: a /readyz that fails
// twice (etcd's check, as a fresh cluster's once did and failed a
// bring-up) is asked again, and the cluster is ready at the third.
func TestReadinessRetriesAnAPIServerThatIsNotReadyYet(t *testing.T) {
	client, asked := startingAPIServer(t, 0, 2)
	if err := waitReady(context.Background(), client, "baton-hub", "https://hub:6443", time.Minute); err != nil {
		t.Fatalf("waitReady: %v", err)
	}
	if n := asked.Load(); n != 3 {
		t.Errorf("/readyz asked %d times, want 3 (two failures, then ready)", n)
	}
}

// TestReadinessNamesTheLastErrorAtTheDeadline: an API server that never
// answers ready fails the wait at its deadline, naming the cluster, its
// address and the last error it gave.
func TestReadinessNamesTheLastErrorAtTheDeadline(t *testing.T) {
	client, asked := startingAPIServer(t, 0, 1<<30)
	err := waitReady(context.Background(), client, "baton-hub", "https://hub:6443", 1500*time.Millisecond)
	if err == nil {
		t.Fatal("waitReady on an API server that is never ready: no error")
	}
	for _, want := range []string{"baton-hub cannot be reached", "https://hub:6443", "etcd failed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	if asked.Load() < 2 {
		t.Errorf("/readyz asked %d times before giving up, want it retried", asked.Load())
	}
}

// TestReadyzPassesOnceReady: the bring-up's wait asks again an API server
// that does not answer yet, and both waits wait out one that answers not
// ready -- its etcd check failing on a loaded host: attaching then attaches
// rather than erroring a story before its first step (issue 40's second
// flake). Each passes at the first ok.
func TestReadyzPassesOnceReady(t *testing.T) {
	for _, c := range []struct {
		name                 string
		unanswered, notReady int32
		mode                 Unanswered
	}{
		{"a bring-up, the server still starting", 2, 1, WaitUnanswered},
		{"an attach, the server loaded", 0, 2, FailUnanswered},
	} {
		client, asked := startingAPIServer(t, c.unanswered, c.notReady)
		if err := WaitReadyz(context.Background(), client, "https://hub:6443", time.Minute, c.mode); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n, want := asked.Load(), c.unanswered+c.notReady+1; n != want {
			t.Errorf("%s: /readyz asked %d times, want %d", c.name, n, want)
		}
	}
}

// TestReadyzFailsAtOnceOnAnAPIServerThatDoesNotAnswer: attaching to a bed
// that is down says so at the first ask, not at the limit.
func TestReadyzFailsAtOnceOnAnAPIServerThatDoesNotAnswer(t *testing.T) {
	client, asked := startingAPIServer(t, 1<<30, 0)
	err := WaitReadyz(context.Background(), client, "https://hub:6443", time.Hour, FailUnanswered)
	if err == nil || !strings.Contains(err.Error(), "https://hub:6443 does not answer") {
		t.Fatalf("got %v, want the API server named as not answering", err)
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("/readyz asked %d times, want 1", n)
	}
}

// TestReadyzGivesUpOnAnAPIServerNeverReady: one that stays not ready fails
// at the limit, with what it last said.
func TestReadyzGivesUpOnAnAPIServerNeverReady(t *testing.T) {
	client, _ := startingAPIServer(t, 0, 1<<30)
	err := WaitReadyz(context.Background(), client, "https://hub:6443", time.Second, FailUnanswered)
	if err == nil || !strings.Contains(err.Error(), "not ready within 1s") || !strings.Contains(err.Error(), "etcd failed") {
		t.Fatalf("got %v, want not ready within 1s, etcd failed", err)
	}
}
