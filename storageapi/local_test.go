package storageapi_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/core/coretest"
	"github.com/baton-dr/baton/storageapi"
)

// guard bounds how long a test waits for a call that must return: past it
// the call is taken to wait for a peer (a failure, not a measurement).
const guard = 30 * time.Second

// silentPeers is a test double of a peer site whose packets are dropped:
// every call waits until release is closed, then fails unreachable.
type silentPeers struct {
	release chan struct{}
	called  chan string // every call, as it arrives
}

func (p *silentPeers) wait(call string) error {
	select {
	case p.called <- call:
	default:
	}
	<-p.release
	return fmt.Errorf("%s: %w", call, chain.ErrUnreachable)
}

func (p *silentPeers) Handover(chain.Ref) (core.Handover, error) {
	return core.Handover{}, p.wait("Handover")
}
func (p *silentPeers) LearnSuccessor(chain.Ref, chain.Ref) error { return p.wait("LearnSuccessor") }
func (p *silentPeers) PrepareReceive(chain.ClusterID, core.ReceiveRequest) ([]core.Receiver, error) {
	return nil, p.wait("PrepareReceive")
}
func (p *silentPeers) Holdings(chain.ClusterID, chain.Ref) ([]string, error) {
	return nil, p.wait("Holdings")
}

// within runs call and fails the test unless it returns within guard.
func within[T any](t *testing.T, what string, call func() (T, error)) (T, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := call()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(guard):
		t.Fatalf("%s did not return: it waits for the silent peer", what)
		panic("unreachable")
	}
}

// survivor is site B holding a replica of A's member, with a snapshot
// received, served by a Local whose peer -- site A -- answers nothing.
func survivor(t *testing.T, store core.Store) (*storageapi.Local, *silentPeers, chain.Ref) {
	t.Helper()
	peers := &silentPeers{release: make(chan struct{}), called: make(chan string, 64)}
	t.Cleanup(func() { close(peers.release) })
	s, err := core.New(core.Config{Cluster: clusterB, NewVolumeID: coretest.VolumeIDs(clusterB)},
		store, peers, coretest.NewClock(coretest.Epoch))
	if err != nil {
		t.Fatal(err)
	}
	local := storageapi.NewLocal(s, storageapi.WithCourier(storageapi.NewGoCourier(100*time.Millisecond)))
	ctx := context.Background()
	for _, n := range []string{"n1", "n2"} {
		if err := local.Report(ctx, core.NodeStatus{Node: n, Address: n, Usage: backend.Usage{SizeBytes: 100 << 30, FreeBytes: 100 << 30}}); err != nil {
			t.Fatal(err)
		}
	}
	source := chain.Ref{Cluster: clusterA, Volume: "aaaaaaaa-0000-4000-8000-000000000001"}
	receivers, err := local.PrepareReceive(ctx, core.ReceiveRequest{Source: source, Root: source,
		Shape: core.Shape{SizeBytes: 1 << 30, PlaceCount: 1, VolumeMode: core.Block}})
	if err != nil || len(receivers) != 1 {
		t.Fatalf("PrepareReceive = %v, %v", receivers, err)
	}
	dataset := core.Replica{Source: source}.Dataset()
	if err := local.Report(ctx, core.NodeStatus{Node: receivers[0].Node, Usage: backend.Usage{SizeBytes: 100 << 30, FreeBytes: 100 << 30},
		Datasets: []core.DatasetStatus{{Name: dataset, Snapshots: []core.SnapshotInfo{{Name: "baton-000001", GUID: "g1"}}}}}); err != nil {
		t.Fatal(err)
	}
	return local, peers, source
}

// TestASiteWhosePeerIsSilentAnswersAtOnce: with the peer answering nothing, a
// forced fail-over answers OK -- its announcement to the peer is still in
// flight -- and so do a new volume and a tick that asks the peer for the
// clone's receivers; a planned fail-over answers ErrPeerUnreachable within
// the courier's question budget. None of them waits for the peer.
func TestASiteWhosePeerIsSilentAnswersAtOnce(t *testing.T) {
	local, peers, source := survivor(t, core.NewMemoryStore())
	ctx := context.Background()
	clone, err := within(t, "a forced fail-over", func() (core.Volume, error) { return local.Failover(ctx, source, true) })
	if err != nil || clone.Predecessor != source {
		t.Fatalf("forced fail-over = %+v, %v; want the clone", clone.Member, err)
	}
	if _, err := within(t, "a new volume", func() (core.Volume, error) {
		return local.CreateVolume(ctx, core.CreateRequest{Name: "pvc-new", Shape: core.Shape{SizeBytes: 1 << 20, PlaceCount: 1, VolumeMode: core.Block}})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := within(t, "a tick", func() (struct{}, error) { return struct{}{}, local.Tick() }); err != nil {
		t.Fatal(err)
	}
	other := chain.Ref{Cluster: clusterA, Volume: "aaaaaaaa-0000-4000-8000-000000000002"}
	if _, err := within(t, "a planned fail-over", func() (core.Volume, error) { return local.Failover(ctx, other, false) }); !errors.Is(err, core.ErrNoReplica) {
		t.Fatalf("a fail-over of a member without a replica: %v, want ErrNoReplica", err)
	}
	select { // the courier's goroutines reach the peer in their own time
	case call := <-peers.called:
		t.Logf("a call waiting at the silent peer: %s", call)
	case <-time.After(guard):
		t.Fatal("nothing was sent to the peer: the fail-over's announcement is missing")
	}
}

// TestAPlannedFailoverWithASilentPeerRefusesWithinTheQuestionBudget: the
// Handover question times out in the courier's budget and the fail-over
// answers ErrPeerUnreachable (Ramen then forces), changing nothing.
func TestAPlannedFailoverWithASilentPeerRefusesWithinTheQuestionBudget(t *testing.T) {
	local, _, source := survivor(t, core.NewMemoryStore())
	ctx := context.Background()
	_, err := within(t, "a planned fail-over", func() (core.Volume, error) { return local.Failover(ctx, source, false) })
	if !errors.Is(err, core.ErrPeerUnreachable) {
		t.Fatalf("a planned fail-over while the peer is silent: %v, want ErrPeerUnreachable", err)
	}
	members, err := local.Members(ctx, source)
	if err != nil || len(members) != 0 {
		t.Fatalf("the refused fail-over left members %v (%v)", members, err)
	}
}

// stallingStore is a test double of a store whose writes of one chain's
// pairing stall until released, as an API server slow for one object.
type stallingStore struct {
	core.Store
	stall   chain.Ref // the pairing's source
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *stallingStore) PutPairing(p core.Pairing) error {
	if p.Source == s.stall {
		s.once.Do(func() { close(s.entered) })
		<-s.release
	}
	return s.Store.PutPairing(p)
}

// TestAStalledChainHoldsOnlyItsOwnLock: while the tick is stuck writing one
// chain's pairing, calls on other chains, and the report of a node that
// holds nothing of that chain, go through.
func TestAStalledChainHoldsOnlyItsOwnLock(t *testing.T) {
	store := &stallingStore{Store: core.NewMemoryStore(), entered: make(chan struct{}), release: make(chan struct{})}
	local, _, source := survivor(t, store)
	ctx := context.Background()
	clone, err := local.Failover(ctx, source, true)
	if err != nil {
		t.Fatal(err)
	}
	store.stall = clone.Ref
	ticked := make(chan error, 1)
	go func() { ticked <- local.Tick() }() // the clone's pairing is due: the tick writes it
	<-store.entered
	if _, err := within(t, "a new volume beside a stalled chain", func() (core.Volume, error) {
		return local.CreateVolume(ctx, core.CreateRequest{Name: "pvc-beside", Shape: core.Shape{SizeBytes: 1 << 20, PlaceCount: 1, VolumeMode: core.Block}})
	}); err != nil {
		t.Fatal(err)
	}
	other := "n1"
	if clone.Home == other {
		other = "n2"
	}
	if _, err := within(t, "a report of another node beside a stalled chain", func() (struct{}, error) {
		return struct{}{}, local.Report(ctx, core.NodeStatus{Node: other, Usage: backend.Usage{SizeBytes: 100 << 30, FreeBytes: 100 << 30}})
	}); err != nil {
		t.Fatal(err)
	}
	close(store.release)
	if err := <-ticked; err != nil {
		t.Fatal(err)
	}
}
