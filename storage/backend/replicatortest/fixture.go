package replicatortest

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

// volumeBytes is each replica's backing volume: large enough for DRBD's
// internal metadata on a real machine, small enough to sync in seconds.
const volumeBytes = 32 << 20

// fixture is one resource replicated across a site's nodes.
type fixture struct {
	t      *testing.T
	site   Site
	nodes  []string
	r      []backend.Replicator
	config backend.ResourceConfig
}

// newFixture builds a site of n nodes and a resource spanning all of them,
// with every backing volume created; nothing is up.
func newFixture(t *testing.T, newSite func(t *testing.T, nodes int) Site, n int) *fixture {
	t.Helper()
	site := newSite(t, n)
	nodes := site.Nodes()
	if len(nodes) < n {
		t.Fatalf("site has nodes %v, want at least %d", nodes, n)
	}
	nodes = nodes[:n]
	f := &fixture{t: t, site: site, nodes: nodes}
	name := resourceName(t.Name())
	f.config = backend.ResourceConfig{Name: name, Minor: 1000, Port: 7000}
	for i, node := range nodes {
		f.r = append(f.r, site.Replicator(node))
		f.config.Nodes = append(f.config.Nodes, backend.ResourceNode{
			Node: node, NodeID: uint8(i), Address: site.Address(node, f.config.Port), Volume: name})
		if err := site.CreateVolume(node, name, volumeBytes); err != nil {
			t.Fatalf("CreateVolume(%s, %s): %v", node, name, err)
		}
	}
	t.Cleanup(func() {
		for i := range f.nodes {
			_ = f.r[i].Down(f.config.Name)
		}
	})
	return f
}

// resourceName is a DRBD resource (and volume) name of its own for each test,
// so that the tests of a reused real site never meet: a readable prefix and a
// hash of the whole test name.
func resourceName(test string) string {
	h := fnv.New32a()
	h.Write([]byte(test))
	readable := ""
	for _, part := range strings.Split(test, "/") {
		if strings.Trim(part, "0123456789") != "" {
			readable = strings.ToLower(strings.ReplaceAll(part, "_", "-"))
		}
	}
	return fmt.Sprintf("rt-%.24s-%08x", readable, h.Sum32())
}

// start brings fresh replicas up as baton does: create-md, up, and once all
// are connected, skip the initial sync.
func (f *fixture) start() {
	f.t.Helper()
	for i := range f.nodes {
		f.must(f.r[i].CreateMetadata(f.config), "CreateMetadata on %s", f.nodes[i])
		f.must(f.r[i].Up(f.config), "Up on %s", f.nodes[i])
	}
	f.await("all connected", f.allConnected)
	f.must(f.r[0].NewCurrentUUID(f.config.Name, true), "NewCurrentUUID(clear-bitmap) on %s", f.nodes[0])
	f.await("all UpToDate", f.allUpToDate)
}

func (f *fixture) must(err error, format string, args ...any) {
	f.t.Helper()
	if err != nil {
		f.t.Fatalf("%s: %v", fmt.Sprintf(format, args...), err)
	}
}

func (f *fixture) await(what string, cond func() bool) {
	f.t.Helper()
	if !f.site.Await(cond) {
		f.t.Fatalf("timed out waiting for %s; status:\n%s", what, f.dump())
	}
}

func (f *fixture) status(i int) backend.ResourceStatus {
	f.t.Helper()
	s, err := f.r[i].Status(f.config.Name)
	f.must(err, "Status on %s", f.nodes[i])
	return s
}

// peer is node i's view of node j.
func (f *fixture) peer(i, j int) backend.PeerStatus {
	f.t.Helper()
	for _, p := range f.status(i).Peers {
		if p.Node == f.nodes[j] {
			return p
		}
	}
	f.t.Fatalf("%s does not list peer %s", f.nodes[i], f.nodes[j])
	return backend.PeerStatus{}
}

// quietStatus is Status for conditions, which must not fail the test midway.
func (f *fixture) quietStatus(i int) (backend.ResourceStatus, bool) {
	s, err := f.r[i].Status(f.config.Name)
	return s, err == nil
}

func (f *fixture) quietPeer(i, j int) (backend.PeerStatus, bool) {
	s, ok := f.quietStatus(i)
	if !ok {
		return backend.PeerStatus{}, false
	}
	for _, p := range s.Peers {
		if p.Node == f.nodes[j] {
			return p, true
		}
	}
	return backend.PeerStatus{}, false
}

func (f *fixture) allConnected() bool {
	for i := range f.nodes {
		s, ok := f.quietStatus(i)
		if !ok || len(s.Peers) != len(f.nodes)-1 {
			return false
		}
		for _, p := range s.Peers {
			if p.Connection != backend.Connected {
				return false
			}
		}
	}
	return true
}

func (f *fixture) allUpToDate() bool {
	for i := range f.nodes {
		s, ok := f.quietStatus(i)
		if !ok || s.Disk != backend.UpToDate || len(s.Peers) != len(f.nodes)-1 {
			return false
		}
		for _, p := range s.Peers {
			if p.Connection != backend.Connected || p.Disk != backend.UpToDate || p.OutOfSyncBytes != 0 {
				return false
			}
		}
	}
	return true
}

func (f *fixture) dump() string {
	var b strings.Builder
	for i, node := range f.nodes {
		s, err := f.r[i].Status(f.config.Name)
		if err != nil {
			fmt.Fprintf(&b, "  %s: %v\n", node, err)
			continue
		}
		fmt.Fprintf(&b, "  %s: %s %s quorum=%t\n", node, s.Role, s.Disk, s.Quorum)
		for _, p := range s.Peers {
			fmt.Fprintf(&b, "    %s: %s %s %s oos=%d\n", p.Node, p.Connection, p.Role, p.Disk, p.OutOfSyncBytes)
		}
	}
	return b.String()
}

// write writes on node i, which must be Primary, and flushes.
func (f *fixture) write(i int, offset int64, data []byte) {
	f.t.Helper()
	dev, err := f.r[i].Open(f.config.Name)
	f.must(err, "Open on %s", f.nodes[i])
	defer dev.Close()
	if n, err := dev.WriteAt(data, offset); err != nil || n != len(data) {
		f.t.Fatalf("WriteAt(%d bytes at %d) on %s = %d, %v", len(data), offset, f.nodes[i], n, err)
	}
	f.must(dev.Sync(), "Sync on %s", f.nodes[i])
}

// read reads on node i, which must be Primary.
func (f *fixture) read(i int, offset int64, length int) []byte {
	f.t.Helper()
	dev, err := f.r[i].Open(f.config.Name)
	f.must(err, "Open on %s", f.nodes[i])
	defer dev.Close()
	data := make([]byte, length)
	if n, err := dev.ReadAt(data, offset); err != nil || n != length {
		f.t.Fatalf("ReadAt(%d bytes at %d) on %s = %d, %v", length, offset, f.nodes[i], n, err)
	}
	return data
}

func (f *fixture) expectRead(i int, offset int64, want []byte, what string) {
	f.t.Helper()
	if got := f.read(i, offset, len(want)); !bytes.Equal(got, want) {
		f.t.Errorf("%s: %s reads %q... at %d, want %q...", what, f.nodes[i], head(got), offset, head(want))
	}
}

func head(b []byte) []byte { return b[:min(len(b), 16)] }

// expectRefusal checks a refusal's kind and that the tool's words say why.
func expectRefusal(t *testing.T, err error, kind error, words string, what string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s succeeded, want %v (%q)", what, kind, words)
	}
	if !errors.Is(err, kind) {
		t.Errorf("%s: %v, want kind %v", what, err, kind)
	}
	if !strings.Contains(err.Error(), words) {
		t.Errorf("%s: %q does not say %q", what, err.Error(), words)
	}
}

// pattern is recognisable data of a length: every byte says where it came from.
func pattern(tag byte, length int) []byte {
	b := make([]byte, length)
	for i := range b {
		b[i] = tag ^ byte(i*7)
	}
	return b
}
