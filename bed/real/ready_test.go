package real

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// readyzServer answers /readyz as a loaded kube-apiserver does: "readyz
// check failed" (500) for the first failing looks, then ok.
func readyzServer(t *testing.T, failing int32) (*httptest.Server, kubernetes.Interface, *atomic.Int32) {
	t.Helper()
	var looks atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if looks.Add(1) <= failing {
			http.Error(w, "[-]etcd failed: reason withheld\nreadyz check failed", http.StatusInternalServerError)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	c, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c, &looks
}

// An API server that answers not ready for a moment -- its etcd check
// failing on a loaded host -- is waited for: the story is attached, not
// errored before its first step (issue 40's second flake).
func TestAttachWaitsForAnAPIServerThatAnswersNotReady(t *testing.T) {
	_, c, looks := readyzServer(t, 2)
	if err := apiServerReady(context.Background(), c, time.Minute); err != nil {
		t.Fatalf("an API server ready at its third look: %v", err)
	}
	if n := looks.Load(); n != 3 {
		t.Errorf("looked %d times, want 3", n)
	}
}

// One that stays not ready fails at the limit, with what it last said.
func TestAttachGivesUpOnAnAPIServerNeverReady(t *testing.T) {
	_, c, _ := readyzServer(t, 1<<30)
	err := apiServerReady(context.Background(), c, time.Second)
	if err == nil || !strings.Contains(err.Error(), "not ready within 1s") {
		t.Fatalf("got %v, want not ready within 1s", err)
	}
}

// One that does not answer at all fails at once: the bed is down, and a
// wait would only put off saying so.
func TestAttachFailsAtOnceOnAnAPIServerThatDoesNotAnswer(t *testing.T) {
	srv, c, _ := readyzServer(t, 0)
	srv.Close()
	done := make(chan error, 1)
	go func() { done <- apiServerReady(context.Background(), c, time.Hour) }()
	if err := <-done; err == nil {
		t.Fatal("a closed server answered ready")
	}
}
