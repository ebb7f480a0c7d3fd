package drbd

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

const testVolumeBytes = 8 << 20

// simResource is one resource across the first n nodes of a simSite.
type simResource struct {
	t      testing.TB
	site   *simSite
	config backend.ResourceConfig
	r      []backend.Replicator
}

// newSimResource creates the backing volumes and a configuration; nothing is up.
// Nodes listed in diskless get no volume.
func newSimResource(t testing.TB, site *simSite, name string, n int, diskless ...string) *simResource {
	t.Helper()
	s := &simResource{t: t, site: site, config: backend.ResourceConfig{Name: name, Minor: 1000, Port: 7000}}
	for i, node := range site.names[:n] {
		volume := name
		if contains(diskless, node) {
			volume = ""
		} else if err := site.CreateVolume(node, name, testVolumeBytes); err != nil {
			t.Fatal(err)
		}
		s.config.Nodes = append(s.config.Nodes, backend.ResourceNode{Node: node, NodeID: uint8(i),
			Address: site.Address(node, s.config.Port), Volume: volume})
		s.r = append(s.r, site.Replicator(node))
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// start: create-md on the diskful nodes, up everywhere, skip the initial sync.
func (s *simResource) start() {
	s.t.Helper()
	for i, n := range s.config.Nodes {
		if n.Volume != "" {
			s.must(s.r[i].CreateMetadata(s.config))
		}
		s.must(s.r[i].Up(s.config))
	}
	s.must(s.r[0].NewCurrentUUID(s.config.Name, true))
	if !s.site.Await(s.allUpToDate) {
		s.t.Fatalf("not all UpToDate:\n%s", strings.Join(s.site.sched.log, "\n"))
	}
}

func (s *simResource) allUpToDate() bool {
	for i, n := range s.config.Nodes {
		st, err := s.r[i].Status(s.config.Name)
		if err != nil || (n.Volume != "" && st.Disk != backend.UpToDate) {
			return false
		}
		for _, p := range st.Peers {
			if p.Connection != backend.Connected || (p.Disk != backend.UpToDate && p.Disk != backend.Diskless) || p.OutOfSyncBytes != 0 {
				return false
			}
		}
	}
	return true
}

func (s *simResource) must(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
}

func (s *simResource) status(i int) backend.ResourceStatus {
	s.t.Helper()
	st, err := s.r[i].Status(s.config.Name)
	s.must(err)
	return st
}

func (s *simResource) peer(i int, node string) backend.PeerStatus {
	s.t.Helper()
	for _, p := range s.status(i).Peers {
		if p.Node == node {
			return p
		}
	}
	s.t.Fatalf("no peer %s", node)
	return backend.PeerStatus{}
}

// write writes through node i's device; sync says whether it flushes.
func (s *simResource) write(i int, offset int64, data []byte, sync bool) {
	s.t.Helper()
	dev, err := s.r[i].Open(s.config.Name)
	s.must(err)
	defer dev.Close()
	if _, err := dev.WriteAt(data, offset); err != nil {
		s.t.Fatal(err)
	}
	if sync {
		s.must(dev.Sync())
	}
}

func (s *simResource) read(i int, offset int64, n int) []byte {
	s.t.Helper()
	dev, err := s.r[i].Open(s.config.Name)
	s.must(err)
	defer dev.Close()
	b := make([]byte, n)
	if _, err := dev.ReadAt(b, offset); err != nil {
		s.t.Fatal(err)
	}
	return b
}

// onVolume reads a node's backing volume directly, as a checker outside DRBD.
func (s *simResource) onVolume(node string, offset int64, n int) []byte {
	b := make([]byte, n)
	s.site.pools[node].volumes[s.config.Name].readAt(b, offset)
	return b
}

func wantRefusal(t *testing.T, err, kind error, words string) {
	t.Helper()
	if err == nil || !errors.Is(err, kind) || !strings.Contains(err.Error(), words) {
		t.Fatalf("got %v, want %v saying %q", err, kind, words)
	}
}

func fill(tag byte, n int) []byte { return bytes.Repeat([]byte{tag}, n) }

func dumpLog(s *simSite) string { return fmt.Sprint("\n", strings.Join(s.sched.log, "\n")) }

// newPrimaryPair is where most tests start: resource r0 up and in sync on a
// two-node site, node-0 Primary. tweak adjusts the cluster's options (nil:
// none).
func newPrimaryPair(t testing.TB, tweak func(*Options)) (*simSite, *simResource) {
	t.Helper()
	site := newSimSite(t, 2, tweak)
	res := newSimResource(t, site, "r0", 2)
	res.start()
	res.must(res.r[0].Primary("r0", false))
	return site, res
}

// rejoin brings node i's resource up again and waits until every copy is
// in sync.
func (s *simResource) rejoin(i int) {
	s.t.Helper()
	s.must(s.r[i].Up(s.config))
	if !s.site.Await(s.allUpToDate) {
		s.t.Fatalf("no resync once node %d was up again:%s", i, dumpLog(s.site))
	}
}
