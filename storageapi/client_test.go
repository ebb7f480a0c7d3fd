package storageapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
	"github.com/baton-dr/baton/storageapi/storageapitest"
)

var ctx = context.Background()

func shape(sizeBytes uint64) core.Shape {
	return core.Shape{SizeBytes: sizeBytes, PlaceCount: 2, VolumeMode: core.Filesystem}
}

// TestOperationsCrossTheWire drives a volume through every operation of the
// API over HTTPS, the peer calls between the two sites included.
func TestOperationsCrossTheWire(t *testing.T) {
	p := newPair(t)
	a, b := p.clients[clusterA], p.clients[clusterB]
	v, err := a.CreateVolume(ctx, core.CreateRequest{Name: "db", Shape: shape(1 << 30)})
	must(t, err)
	if v.Ref.Cluster != clusterA || v.Root != v.Ref || v.Primary == "" {
		t.Fatalf("created %+v", v.Member)
	}
	got, err := a.Volume(ctx, v.Ref)
	if err != nil || got.Ref != v.Ref || got.Shape != v.Shape || !got.CreatedAt.Equal(v.CreatedAt) {
		t.Fatalf("Volume = %+v, %v", got.Member, err)
	}
	bigger, err := a.ExpandVolume(ctx, v.Ref, 2<<30)
	if err != nil || bigger.SizeBytes != 2<<30 {
		t.Fatalf("ExpandVolume = %d, %v", bigger.SizeBytes, err)
	}
	other := "n1"
	if v.Primary == other {
		other = "n2"
	}
	attached, err := a.Attach(ctx, v.Ref, other)
	if err != nil || attached.Primary != other {
		t.Fatalf("Attach = %s, %v", attached.Primary, err)
	}
	must(t, a.RecordFilesystem(ctx, v.Ref, "xfs"))
	capacity, err := a.Capacity(ctx, 1)
	if err != nil || capacity != 98<<30 {
		t.Fatalf("Capacity(1) = %d, %v; want 98 GiB", capacity, err)
	}
	snap, err := a.CreateSnapshot(ctx, v.Ref, "snap")
	must(t, err)
	list, err := a.ListSnapshots(ctx)
	if err != nil || len(list) != 1 || list[0].Ref != snap.Ref {
		t.Fatalf("ListSnapshots = %+v, %v", list, err)
	}
	clone, err := a.CreateVolumeFrom(ctx, core.CreateRequest{Name: "restored", Shape: shape(2 << 30)}, core.CloneSource{Snapshot: snap.Ref})
	if err != nil || clone.Origin.Snapshot != snap.Ref.Name() {
		t.Fatalf("CreateVolumeFrom = %+v, %v", clone.Origin, err)
	}
	must(t, a.DeleteSnapshot(ctx, snap.Ref))

	// Enable asks B (through B's API) what it holds and where to receive.
	must(t, a.Enable(ctx, v.Ref, clusterB))
	spec, err := a.Spec(ctx, v.Home)
	if err != nil || len(spec.Volumes) == 0 {
		t.Fatalf("Spec(%s) = %+v, %v", v.Home, spec, err)
	}
	must(t, a.Report(ctx, core.NodeStatus{Node: v.Home, Usage: backend.Usage{SizeBytes: 100 << 30},
		Datasets: []core.DatasetStatus{{Name: v.Dataset(), Snapshots: []core.SnapshotInfo{{Name: "baton-000001", GUID: "g1"}}}}}))
	members, err := b.Members(ctx, v.Ref)
	if err != nil || len(members) != 0 {
		t.Fatalf("B's members of %s: %v, %v; want none", v.Ref, members, err)
	}
	members, err = a.Members(ctx, v.Ref)
	if err != nil || len(members) != 1 || members[0].Ref != v.Ref {
		t.Fatalf("A's members: %v, %v", members, err)
	}
	if _, err := a.Holdings(ctx, v.Ref); err != nil {
		t.Fatal(err)
	}
	st, err := a.Status(ctx, v.Ref)
	if err != nil || st.Target != clusterB {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	must(t, a.Demote(ctx, v.Ref))
	h, err := a.Handover(ctx, v.Ref)
	if err != nil || h.State != chain.Demoted {
		t.Fatalf("Handover = %+v, %v", h, err)
	}
	if ready, err := a.Resync(ctx, v.Ref, clusterB); err != nil || ready {
		t.Fatalf("Resync of a demoted end before its final sync = %v, %v", ready, err)
	}
	must(t, a.Disable(ctx, v.Ref))
	receivers, err := b.PrepareReceive(ctx, core.ReceiveRequest{Source: v.Ref, Root: v.Ref, Shape: v.Shape})
	if err != nil || len(receivers) == 0 {
		t.Fatalf("PrepareReceive = %v, %v", receivers, err)
	}
	must(t, a.LearnSuccessor(ctx, v.Ref, chain.Ref{Cluster: clusterB, Volume: "bbbbbbbb-0000-4000-8000-000000000099"}))
	if _, err := b.Failover(ctx, v.Ref, true); !errors.Is(err, core.ErrNoSnapshot) {
		t.Fatalf("Failover of a replica that received nothing: %v, want ErrNoSnapshot", err)
	}
	must(t, a.DeleteVolume(ctx, clone.Ref))
}

// TestSentinelsCrossTheWire: errors.Is works on the client as on the site.
func TestSentinelsCrossTheWire(t *testing.T) {
	p := newPair(t)
	a, b := p.clients[clusterA], p.clients[clusterB]
	v, err := a.CreateVolume(ctx, core.CreateRequest{Name: "db", Shape: shape(1 << 30)})
	must(t, err)
	stranger := chain.Ref{Cluster: clusterA, Volume: "aaaaaaaa-0000-4000-8000-000000000777"}
	must(t, a.LearnSuccessor(ctx, v.Ref, chain.Ref{Cluster: clusterB, Volume: "bbbbbbbb-0000-4000-8000-000000000001"}))
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"not found", func() error { _, err := a.Volume(ctx, stranger); return err }, core.ErrNotFound},
		{"exists", func() error {
			_, err := a.CreateVolume(ctx, core.CreateRequest{Name: "db", Shape: shape(2 << 30)})
			return err
		}, core.ErrExists},
		{"invalid", func() error { _, err := a.CreateVolume(ctx, core.CreateRequest{Shape: shape(1)}); return err }, core.ErrInvalid},
		{"not local", func() error { _, err := b.Volume(ctx, v.Ref); return err }, core.ErrNotLocal},
		{"no replica", func() error { _, err := b.Failover(ctx, stranger, true); return err }, core.ErrNoReplica},
		{"no capacity", func() error {
			_, err := a.CreateVolume(ctx, core.CreateRequest{Name: "huge", Shape: shape(1 << 50)})
			return err
		}, core.ErrNoCapacity},
		{"conflict", func() error {
			return a.LearnSuccessor(ctx, v.Ref, chain.Ref{Cluster: clusterB, Volume: "bbbbbbbb-0000-4000-8000-000000000002"})
		}, core.ErrConflict},
		{"not active", func() error { _, err := a.Attach(ctx, v.Ref, "n1"); return err }, core.ErrNotActive},
		{"malformed snapshot", func() error {
			return a.DeleteSnapshot(ctx, core.SnapshotRef{Member: v.Ref, Snapshot: "not-a-uuid"})
		}, core.ErrMalformedSnapshotRef},
	}
	for _, tt := range tests {
		err := tt.call()
		if !errors.Is(err, tt.want) || errors.Is(err, chain.ErrUnreachable) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
		var problem *storageapi.ProblemError
		if !errors.As(err, &problem) || problem.Kind == "" || problem.Detail == "" {
			t.Errorf("%s: %v is not a problem document with a kind and a detail", tt.name, err)
		}
	}
}

func TestAPeerThatCannotBeAskedIsPeerUnreachable(t *testing.T) {
	p := newPair(t)
	a, b := p.clients[clusterA], p.clients[clusterB]
	v, err := a.CreateVolume(ctx, core.CreateRequest{Name: "db", Shape: shape(1 << 30)})
	must(t, err)
	must(t, a.Enable(ctx, v.Ref, clusterB))
	must(t, p.locals[clusterB].Report(ctx, core.NodeStatus{Node: "n1", Usage: backend.Usage{SizeBytes: 100 << 30},
		Datasets: []core.DatasetStatus{{Name: "rep-" + string(v.Ref.Volume), Snapshots: []core.SnapshotInfo{{Name: "baton-000001", GUID: "g1"}}}}}))
	p.servers[clusterA].Cut()
	if _, err := b.Failover(ctx, v.Ref, false); !errors.Is(err, core.ErrPeerUnreachable) {
		t.Fatalf("fail-over without force while A is cut off: %v, want ErrPeerUnreachable", err)
	}
	if _, err := a.Volume(ctx, v.Ref); !errors.Is(err, chain.ErrUnreachable) {
		t.Fatalf("a call to the cut-off site: %v, want chain.ErrUnreachable", err)
	}
	p.servers[clusterA].Heal()
	if _, err := a.Volume(ctx, v.Ref); err != nil {
		t.Fatalf("after healing: %v", err)
	}
}

func TestTransportFailuresAreUnreachableButABadCertificateIsNot(t *testing.T) {
	p := newPair(t)
	server := p.servers[clusterA]
	closed, err := storageapitest.Serve(p.ca, p.locals[clusterA], "s")
	must(t, err)
	closed.Close()
	gone, err := storageapi.NewClient(storageapi.ClientConfig{ID: clusterA, Endpoint: closed.URL, Secret: "s", TLS: p.ca.ClientTLS()})
	must(t, err)
	if _, err := gone.Members(ctx, chain.Ref{}); !errors.Is(err, chain.ErrUnreachable) {
		t.Errorf("a closed server: %v, want ErrUnreachable", err)
	}
	otherCA, err := storageapitest.NewCA()
	must(t, err)
	untrusted, err := storageapi.NewClient(storageapi.ClientConfig{ID: clusterA, Endpoint: server.URL, Secret: server.Secret, TLS: otherCA.ClientTLS()})
	must(t, err)
	_, err = untrusted.Volume(ctx, chain.Ref{Cluster: clusterA, Volume: "aaaaaaaa-0000-4000-8000-000000000001"})
	if err == nil || errors.Is(err, chain.ErrUnreachable) || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a server whose certificate does not verify: %v, want a certificate error that is not ErrUnreachable", err)
	}
	for _, endpoint := range []string{strings.Replace(server.URL, "https", "http", 1), "https://", "https://u:p@h", "https://h/?q=1", "::"} {
		if _, err := storageapi.NewClient(storageapi.ClientConfig{ID: clusterA, Endpoint: endpoint, Secret: "s"}); err == nil {
			t.Errorf("NewClient accepted endpoint %q", endpoint)
		}
	}
}

func TestEachCallHasADeadline(t *testing.T) {
	p := newPair(t)
	slow := serveHanging(t, p)
	client, err := storageapi.NewClient(storageapi.ClientConfig{ID: clusterA, Endpoint: slow.URL, Secret: "s",
		TLS: p.ca.ClientTLS(), CallTimeout: 50 * time.Millisecond})
	must(t, err)
	root := chain.Ref{Cluster: clusterA, Volume: "aaaaaaaa-0000-4000-8000-000000000001"}
	if _, err := client.Members(ctx, root); !errors.Is(err, chain.ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a server that never answers: %v, want ErrUnreachable after the call's deadline", err)
	}
}

func TestAClusterThatLetACallTimeOutIsAskedBrieflyUntilItAnswers(t *testing.T) {
	p := newPair(t)
	server := p.servers[clusterA]
	hole := newBlackHole(t)
	client, err := storageapi.NewClient(storageapi.ClientConfig{ID: clusterA, Endpoint: server.URL, Secret: server.Secret,
		TLS: p.ca.ClientTLS(), CallTimeout: 300 * time.Millisecond, BriefTimeout: 30 * time.Millisecond, Dial: hole.dial})
	must(t, err)
	root := chain.Ref{Cluster: clusterA, Volume: "aaaaaaaa-0000-4000-8000-000000000001"}
	hole.cut(true)
	_, err = client.Volume(ctx, root)
	if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "only") {
		t.Fatalf("the first silence: %v, want the full timeout's DeadlineExceeded", err)
	}
	_, err = client.Volume(ctx, root)
	if !errors.Is(err, chain.ErrUnreachable) || !strings.Contains(err.Error(), "asked for 30ms only, silent since") {
		t.Fatalf("the next call: %v, want ErrUnreachable after the brief timeout, saying so", err)
	}
	// Any answer ends the silence: the next call has its full timeout.
	hole.cut(false)
	if _, err := client.Volume(ctx, root); errors.Is(err, chain.ErrUnreachable) {
		t.Fatalf("a call the server answers: %v", err)
	}
	hole.cut(true)
	_, err = client.Volume(ctx, root)
	if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "only") {
		t.Fatalf("after an answer: %v, want the full timeout again", err)
	}
	// A caller's own deadline says nothing of the cluster.
	fresh, err := storageapi.NewClient(storageapi.ClientConfig{ID: clusterA, Endpoint: server.URL, Secret: server.Secret,
		TLS: p.ca.ClientTLS(), CallTimeout: 10 * time.Second, BriefTimeout: 30 * time.Millisecond, Dial: hole.dial})
	must(t, err)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := fresh.Volume(short, root); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the caller's deadline: %v", err)
	}
	shorter, cancel2 := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel2()
	if _, err := fresh.Volume(shorter, root); err == nil || strings.Contains(err.Error(), "only") {
		t.Fatalf("after the caller's own deadline ran out: %v, want no brief call", err)
	}
}

// serveHanging serves p's cluster A, whose Members answer only when the
// call's context ends, until the test ends.
func serveHanging(t *testing.T, p *pair) *storageapitest.Server {
	t.Helper()
	hang := make(chan struct{})
	slow, err := storageapitest.Serve(p.ca, hangingCluster{Cluster: p.locals[clusterA], hang: hang}, "s")
	must(t, err)
	t.Cleanup(func() {
		close(hang)
		slow.Close()
	})
	return slow
}

// hangingCluster answers Members only when the call's context ends.
type hangingCluster struct {
	storageapi.Cluster
	hang chan struct{}
}

func (h hangingCluster) Carry(ctx context.Context, op storageapi.Operation, request any) (any, error) {
	if op.Name(request) != "Members" {
		return h.Cluster.Carry(ctx, op, request)
	}
	select {
	case <-ctx.Done():
	case <-h.hang:
	}
	return nil, ctx.Err()
}

func TestAWrongSecretIsForbidden(t *testing.T) {
	p := newPair(t)
	server := p.servers[clusterA]
	wrong, err := storageapi.NewClient(storageapi.ClientConfig{ID: clusterA, Endpoint: server.URL,
		Secret: p.servers[clusterB].Secret, TLS: p.ca.ClientTLS()})
	must(t, err)
	if _, err := wrong.Members(ctx, chain.Ref{Cluster: clusterA, Volume: "aaaaaaaa-0000-4000-8000-000000000001"}); !errors.Is(err, storageapi.ErrForbidden) {
		t.Fatalf("B's secret at A: %v, want ErrForbidden", err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
