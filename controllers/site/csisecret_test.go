package site_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	sitecontroller "github.com/baton-dr/baton/controllers/site"
)

const (
	peerEntry  = `{"cluster_id":"bbbbbbbb-0000-4000-8000-00000000000b","cluster_endpoint":"https://site-b:8443","cluster_secret":"peer-token-b","local":false,"zone":"b"}`
	staleLocal = `{"cluster_id":"dddddddd-0000-4000-8000-00000000000d","cluster_endpoint":"https://old:8443","cluster_secret":"stale-token","local":true}`
	ourOld     = `{"cluster_id":"aaaaaaaa-0000-4000-8000-00000000000a","cluster_endpoint":"https://moved:8443","cluster_secret":"our-token-a","local":false}`
)

func secretRig(t *testing.T, objects ...client.Object) (client.Client, *sitecontroller.CSISecretReconciler, context.Context, *strings.Builder) {
	var logged strings.Builder
	logger := funcr.New(func(prefix, args string) { logged.WriteString(prefix + args + "\n") }, funcr.Options{Verbosity: 9})
	ctx := log.IntoContext(testContext(t), logr.Logger(logger))
	c := fakeClient(t, append([]client.Object{storageCluster("baton")}, objects...)...)
	return c, &sitecontroller.CSISecretReconciler{Client: c, Namespace: "baton", SecretName: "baton-csi",
		Endpoint: "https://site-a.example:8443", Random: rand.NewChaCha8([32]byte{7})}, ctx, &logged
}

func clustersOf(t *testing.T, c client.Client) string {
	t.Helper()
	var s corev1.Secret
	if err := c.Get(testContext(t), client.ObjectKey{Namespace: "baton", Name: "baton-csi"}, &s); err != nil {
		t.Fatal(err)
	}
	return string(s.Data[sitecontroller.CSISecretKey])
}

func TestTheCSISecretGetsItsLocalCluster(t *testing.T) {
	c, r, ctx, logged := secretRig(t)
	if _, err := r.Reconcile(ctx, ctrl.Request{}); err != nil {
		t.Fatal(err)
	}
	got := clustersOf(t, c)
	const prefix = `{"clusters":[{"cluster_id":"aaaaaaaa-0000-4000-8000-00000000000a","cluster_endpoint":"https://site-a.example:8443","cluster_secret":"`
	if !strings.HasPrefix(got, prefix) || !strings.HasSuffix(got, `","local":true}]}`) || len(got) != len(prefix)+64+len(`","local":true}]}`) {
		t.Fatalf("secret %s", got)
	}
	secret := got[len(prefix) : len(prefix)+64]
	if strings.Contains(logged.String(), secret) {
		t.Fatalf("the log holds the cluster secret:\n%s", logged)
	}
	// Nothing changes on a second pass: the secret is drawn once.
	var before corev1.Secret
	_ = c.Get(ctx, client.ObjectKey{Namespace: "baton", Name: "baton-csi"}, &before)
	if _, err := r.Reconcile(ctx, ctrl.Request{}); err != nil {
		t.Fatal(err)
	}
	var after corev1.Secret
	_ = c.Get(ctx, client.ObjectKey{Namespace: "baton", Name: "baton-csi"}, &after)
	if after.ResourceVersion != before.ResourceVersion {
		t.Fatal("a second pass rewrote the secret")
	}
}

// TestTheCSISecretKeepsWhatPeersRegistered: peer entries stay, our own entry
// keeps its secret (and becomes local, with our endpoint), a stale local entry
// of a cluster this site no longer has goes.
func TestTheCSISecretKeepsWhatPeersRegistered(t *testing.T) {
	existing := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "baton", Name: "baton-csi"},
		Data: map[string][]byte{sitecontroller.CSISecretKey: []byte(`{"clusters":[` + peerEntry + `, ` + staleLocal + `,` + ourOld + `]}`),
			"other-key": []byte("kept")}}
	c, r, ctx, logged := secretRig(t, existing)
	if _, err := r.Reconcile(ctx, ctrl.Request{}); err != nil {
		t.Fatal(err)
	}
	want := `{"clusters":[{"cluster_id":"aaaaaaaa-0000-4000-8000-00000000000a","cluster_endpoint":"https://site-a.example:8443","cluster_secret":"our-token-a","local":true},` + peerEntry + `]}`
	if got := clustersOf(t, c); got != want {
		t.Fatalf("secret\n got %s\nwant %s", got, want)
	}
	var s corev1.Secret
	_ = c.Get(ctx, client.ObjectKey{Namespace: "baton", Name: "baton-csi"}, &s)
	if string(s.Data["other-key"]) != "kept" {
		t.Fatal("another key of the secret was lost")
	}
	for _, token := range []string{"our-token-a", "peer-token-b", "stale-token"} {
		if strings.Contains(logged.String(), token) {
			t.Fatalf("the log holds %s:\n%s", token, logged)
		}
	}
}

// TestAMalformedCSISecretIsLeftAlone: the operator will not rewrite what it
// cannot read (peer entries would be lost), and its error quotes nothing.
func TestAMalformedCSISecretIsLeftAlone(t *testing.T) {
	const malformed = `{"clusters":[{"cluster_id":"x","cluster_secret":"leaked-token"` // truncated
	existing := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "baton", Name: "baton-csi"},
		Data: map[string][]byte{sitecontroller.CSISecretKey: []byte(malformed)}}
	c, r, ctx, _ := secretRig(t, existing)
	_, err := r.Reconcile(ctx, ctrl.Request{})
	if !errors.Is(err, sitecontroller.ErrMalformedSecret) || strings.Contains(err.Error(), "leaked-token") {
		t.Fatalf("malformed secret: %v", err)
	}
	if got := clustersOf(t, c); got != malformed {
		t.Fatalf("the malformed secret was rewritten: %s", got)
	}
}

// TestThePeersSecretRegistersPeers: the peers secret's clusters become peer
// entries (local=false whatever it says), in place of a stored entry of the
// same cluster; another stored peer stays; an entry naming our own cluster is
// not registered; and the log holds no token.
func TestThePeersSecretRegistersPeers(t *testing.T) {
	const declaredB = `{"cluster_id":"bbbbbbbb-0000-4000-8000-00000000000b","cluster_endpoint":"https://site-b:30443","cluster_secret":"new-token-b","local":true}`
	const otherPeer = `{"cluster_id":"cccccccc-0000-4000-8000-00000000000c","cluster_endpoint":"https://site-c:8443","cluster_secret":"peer-token-c","local":false}`
	existing := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "baton", Name: "baton-csi"},
		Data: map[string][]byte{sitecontroller.CSISecretKey: []byte(`{"clusters":[` + peerEntry + `,` + otherPeer + `]}`)}}
	peers := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "baton", Name: "baton-peers"},
		Data: map[string][]byte{sitecontroller.CSISecretKey: []byte(`{"clusters":[` + declaredB + `,` + ourOld + `]}`)}}
	c, r, ctx, logged := secretRig(t, existing, peers)
	r.PeersSecretName = "baton-peers"
	if _, err := r.Reconcile(ctx, ctrl.Request{}); err != nil {
		t.Fatal(err)
	}
	got := clustersOf(t, c)
	wantTail := `,` + otherPeer + `,{"cluster_id":"bbbbbbbb-0000-4000-8000-00000000000b","cluster_endpoint":"https://site-b:30443","cluster_secret":"new-token-b","local":false}]}`
	if !strings.HasSuffix(got, wantTail) || strings.Contains(got, "peer-token-b") || strings.Contains(got, "our-token-a") {
		t.Fatalf("secret\n got %s\nwant ...%s", got, wantTail)
	}
	for _, token := range []string{"new-token-b", "peer-token-c"} {
		if strings.Contains(logged.String(), token) {
			t.Fatalf("the log holds %s:\n%s", token, logged)
		}
	}
}

// TestAMalformedPeersSecretIsRefused: nothing is written, nothing quoted.
func TestAMalformedPeersSecretIsRefused(t *testing.T) {
	peers := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "baton", Name: "baton-peers"},
		Data: map[string][]byte{sitecontroller.CSISecretKey: []byte(`{"clusters":[{"cluster_secret":"leaked-token"`)}}
	c, r, ctx, _ := secretRig(t, peers)
	r.PeersSecretName = "baton-peers"
	_, err := r.Reconcile(ctx, ctrl.Request{})
	if !errors.Is(err, sitecontroller.ErrMalformedPeersSecret) || strings.Contains(err.Error(), "leaked-token") {
		t.Fatalf("malformed peers secret: %v", err)
	}
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: "baton", Name: "baton-csi"}, &s); err == nil {
		t.Fatalf("the CSI secret was written: %s", s.Data[sitecontroller.CSISecretKey])
	}
}
