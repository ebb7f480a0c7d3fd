package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dr/baton/node/agent"
	"github.com/baton-dr/baton/node/drbd"
	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/zfs"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
	"github.com/baton-dr/baton/storage/core"
)

const mib = 1 << 20

// pairConfig is a resource over one volume of the same name on every node.
func pairConfig(g *Guests, name string, minor uint32, port uint16) backend.ResourceConfig {
	config := backend.ResourceConfig{Name: name, Minor: minor, Port: port}
	for i, n := range g.Nodes {
		config.Nodes = append(config.Nodes, backend.ResourceNode{Node: n.Name, NodeID: uint8(i), Address: n.Address(port), Volume: name})
	}
	return config
}

func must(t *testing.T, err error, format string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(format, args...), err)
	}
}

func writeDevice(t *testing.T, dev backend.Device, offset int64, data []byte) {
	t.Helper()
	if n, err := dev.WriteAt(data, offset); err != nil || n != len(data) {
		t.Fatalf("WriteAt %d bytes at %d: %d, %v", len(data), offset, n, err)
	}
	must(t, dev.Sync(), "Sync")
}

// await polls a condition on real time.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !NewSite(t, needGuests(t)).Await(cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func upToDatePair(r backend.Replicator, resource string) bool {
	s, err := r.Status(resource)
	if err != nil || s.Disk != backend.UpToDate || len(s.Peers) != 1 {
		return false
	}
	p := s.Peers[0]
	return p.Connection == backend.Connected && p.Disk == backend.UpToDate && p.OutOfSyncBytes == 0
}

// A zvol on each guest replicated by DRBD protocol C: what the primary
// writes is on the peer, which stays UpToDate throughout.
func TestZvolReplicatedByDRBD(t *testing.T) {
	g := needGuests(t)
	const name, sizeBytes = "it-replicated", 64 * mib
	upPair(t, g, name, sizeBytes, 2000, 7100)
	a, b := g.Nodes[0], g.Nodes[1]
	skipInitialSync(t, g, name)
	must(t, a.DRBD.Primary(name, false), "Primary on %s", a.Name)

	data := pooltest.Pattern(7, 16*mib)
	dev, err := a.DRBD.Open(name)
	must(t, err, "Open on %s", a.Name)
	started := time.Now()
	writeDevice(t, dev, 4*mib, data)
	elapsed := time.Since(started)
	must(t, dev.Close(), "Close")
	t.Logf("protocol C: %d MiB written and synced on %s in %v (%.1f MB/s)", len(data)/mib, a.Name, elapsed.Round(time.Millisecond),
		float64(len(data))/elapsed.Seconds()/1e6)
	for _, n := range g.Nodes {
		if !upToDatePair(n.DRBD, name) {
			s, _ := n.DRBD.Status(name)
			t.Fatalf("after the writes %s reports %+v, want itself and its peer UpToDate with nothing out of sync", n.Name, s)
		}
	}
	must(t, a.DRBD.Secondary(name), "Secondary on %s", a.Name)
	must(t, b.DRBD.Primary(name, false), "Primary on %s", b.Name)
	peer, err := b.DRBD.Open(name)
	must(t, err, "Open on %s", b.Name)
	defer peer.Close()
	got := make([]byte, len(data))
	if n, err := peer.ReadAt(got, 4*mib); n != len(got) || err != nil {
		t.Fatalf("ReadAt on %s: %d, %v", b.Name, n, err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("%s reads other bytes than %s wrote", b.Name, a.Name)
	}
}

// countingReader counts the bytes of a stream as a transport would.
type countingReader struct {
	r     io.Reader
	bytes int
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.bytes += n
	return n, err
}

func ship(t *testing.T, from, to *Node, volume, base, snapshot string) int {
	t.Helper()
	stream, err := from.Pool.Send(volume, base, snapshot)
	must(t, err, "Send %s@%s from %q", volume, snapshot, base)
	counted := &countingReader{r: stream}
	must(t, to.Pool.Receive(volume, counted), "Receive %s@%s", volume, snapshot)
	must(t, stream.Close(), "closing the stream")
	return counted.bytes
}

func checksum(t *testing.T, n *Node, volume string) string {
	t.Helper()
	out, err := n.Output("md5sum", n.Pool.DevicePath(volume))
	must(t, err, "md5sum on %s", n.Name)
	sum, _, _ := strings.Cut(string(out), " ")
	return sum
}

// A snapshot and an incremental send of 1% changed data ship about 1% of the
// volume: zfs sends the blocks born since the base, nothing else.
func TestIncrementalSendShipsTheChange(t *testing.T) {
	g := needGuests(t)
	const name, sizeBytes, chunkBytes = "it-send", 64 * mib, 64 << 10
	a, b := g.Nodes[0], g.Nodes[1]
	must(t, a.Pool.CreateVolume(name, sizeBytes, backend.Thin), "CreateVolume")
	for _, n := range g.Nodes {
		t.Cleanup(func() { _ = n.Pool.DestroyVolume(name) })
	}
	dev, err := a.Pool.Open(name)
	must(t, err, "Open")
	writeDevice(t, dev, 0, pooltest.Pattern(1, sizeBytes))
	must(t, a.Pool.Snapshot(name, "s1"), "Snapshot s1")
	full := ship(t, a, b, name, "", "s1")

	const changedBytes = sizeBytes / 100 / chunkBytes * chunkBytes // 1%, in whole chunks
	for i := 0; i < changedBytes/chunkBytes; i++ {
		offset := int64((i*797 + 13) % (sizeBytes / chunkBytes) * chunkBytes)
		writeDevice(t, dev, offset, pooltest.Pattern(uint64(100+i), chunkBytes))
	}
	must(t, dev.Close(), "Close")
	must(t, a.Pool.Snapshot(name, "s2"), "Snapshot s2")
	delta := ship(t, a, b, name, "s1", "s2")
	t.Logf("full stream: %d bytes for a %d MiB volume written whole (%.1f%%)", full, sizeBytes/mib, 100*float64(full)/sizeBytes)
	t.Logf("incremental stream: %d bytes for %d changed bytes (%.2f%% of the volume; the change is %.2f%%)",
		delta, changedBytes, 100*float64(delta)/sizeBytes, 100*float64(changedBytes)/sizeBytes)
	if delta < changedBytes || delta > 2*changedBytes {
		t.Errorf("the incremental stream is %d bytes for %d changed: want about the change", delta, changedBytes)
	}
	if sa, sb := checksum(t, a, name), checksum(t, b, name); sa != sb {
		t.Errorf("after the incremental receive the replica's checksum is %s, the source's %s", sb, sa)
	}
}

// recorder is an exec.Cmder that remembers every command line it makes.
type recorder struct {
	exec.Cmder
	mu    sync.Mutex
	lines []string
}

func (r *recorder) Command(ctx context.Context, name string, args ...string) exec.Cmd {
	r.mu.Lock()
	r.lines = append(r.lines, strings.Join(append([]string{name}, args...), " "))
	r.mu.Unlock()
	return r.Cmder.Command(ctx, name, args...)
}

func (r *recorder) ran(words string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var found []string
	for _, line := range r.lines {
		if strings.Contains(line, words) {
			found = append(found, line)
		}
	}
	return found
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// noTransport ships nothing: these agents replicate inside the site only.
type noTransport struct{}

func (noTransport) Ship(core.Receiver, agent.StreamHeader, io.ReadCloser, func(uint64, error)) {
	panic("integration: the agents of this test ship no streams")
}

// startAgent builds a node's agent from scratch, as a restarted process does:
// new backends over the same machine, everything read back from it.
func startAgent(t *testing.T, n *Node) (*agent.Agent, *recorder) {
	t.Helper()
	rec := &recorder{Cmder: n.Cmder}
	pool, err := zfs.New(zfs.Options{Cmder: rec, Dataset: poolName, Devices: n.Devices})
	must(t, err, "zfs.New on %s", n.Name)
	replicator, err := drbd.New(drbd.Options{Cmder: rec, Node: n.Name, Backing: pool.DevicePath, Devices: n.Devices})
	must(t, err, "drbd.New on %s", n.Name)
	a, err := agent.New(agent.Options{Node: n.Name, Pool: pool, Replicator: replicator, Transport: noTransport{}, Clock: wallClock{}})
	must(t, err, "agent.New on %s", n.Name)
	return a, rec
}

func nodeSpec(node string, volume core.VolumeSpec) core.NodeSpec {
	return core.NodeSpec{Node: node, Volumes: []core.VolumeSpec{volume}}
}

// generation is DRBD's data generation of a resource on a node (`drbdsetup
// get-gi`: current, bitmap and history UUIDs, then the flags): unchanged
// means no create-md, no new UUID, no resync.
func generation(t *testing.T, n *Node, minor uint32) string {
	t.Helper()
	out, err := n.Output("drbdsetup", "get-gi", fmt.Sprint(minor))
	must(t, err, "get-gi on %s", n.Name)
	return strings.TrimSpace(string(out))
}

// Restarting the agents on a running DRBD resource adopts it: no create-md,
// no up, no new generation, no resync; the primary stays primary.
func TestRestartedAgentAdoptsRunningResource(t *testing.T) {
	g := needGuests(t)
	const name = "it-agent"
	config := pairConfig(g, name, 2001, 7101)
	volume := func(role backend.Role) core.VolumeSpec {
		return core.VolumeSpec{Dataset: name, SizeBytes: 64 * mib, Resource: config, Up: true, Role: role}
	}
	roles := map[string]backend.Role{g.Nodes[0].Name: backend.Primary, g.Nodes[1].Name: backend.Secondary}
	agents := map[string]*agent.Agent{}
	for _, n := range g.Nodes {
		agents[n.Name], _ = startAgent(t, n)
		t.Cleanup(func() {
			_ = n.DRBD.Down(name)
			_ = n.Pool.DestroyVolume(name)
		})
	}
	var lastErrors []string
	converged := NewSite(t, g).Await(func() bool {
		lastErrors = nil
		for _, n := range g.Nodes {
			status := agents[n.Name].Reconcile(nodeSpec(n.Name, volume(roles[n.Name])))
			lastErrors = append(lastErrors, status.Errors...)
		}
		s, err := g.Nodes[0].DRBD.Status(name)
		return err == nil && s.Role == backend.Primary && upToDatePair(g.Nodes[0].DRBD, name)
	})
	if !converged {
		s, err := g.Nodes[0].DRBD.Status(name)
		t.Fatalf("the agents did not bring the volume up, primary on %s: %+v, %v; their errors: %q", g.Nodes[0].Name, s, err, lastErrors)
	}
	a := g.Nodes[0]
	writeDRBD(t, a, name, 0, pooltest.Pattern(3, 4*mib))

	before := map[string]string{}
	for _, n := range g.Nodes {
		before[n.Name] = generation(t, n, config.Minor)
	}
	for _, n := range g.Nodes {
		restarted, rec := startAgent(t, n)
		spec := volume(roles[n.Name])
		spec.Initialized, spec.MustExist = true, true
		status := restarted.Reconcile(nodeSpec(n.Name, spec))
		if len(status.Errors) > 0 {
			t.Errorf("the restarted agent on %s reports %q", n.Name, status.Errors)
		}
		for _, forbidden := range []string{"create-md", "drbdadm up", "new-current-uuid", "--force", "zfs create"} {
			if lines := rec.ran(forbidden); len(lines) > 0 {
				t.Errorf("the restarted agent on %s ran %q", n.Name, lines)
			}
		}
		if len(status.Resources) != 1 || status.Resources[0].Role != roles[n.Name] {
			t.Errorf("the restarted agent on %s reports %+v, want %s", n.Name, status.Resources, roles[n.Name])
		}
	}
	for _, n := range g.Nodes {
		if !upToDatePair(n.DRBD, name) {
			s, _ := n.DRBD.Status(name)
			t.Errorf("after the restart %s reports %+v: a resync or a lost peer", n.Name, s)
		}
		if after := generation(t, n, config.Minor); after != before[n.Name] {
			t.Errorf("the data generation on %s moved from %q to %q", n.Name, before[n.Name], after)
		}
	}
}
