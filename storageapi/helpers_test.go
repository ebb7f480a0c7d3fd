package storageapi_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
	"github.com/baton-dr/baton/storageapi/storageapitest"
)

const (
	clusterA chain.ClusterID = "aaaaaaaa-0000-4000-8000-00000000000a"
	clusterB chain.ClusterID = "bbbbbbbb-0000-4000-8000-00000000000b"
)

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// newSite is a site over a memory store with two 100 GiB nodes, n1 and n2.
func newSite(t testing.TB, id chain.ClusterID, peers core.Peers) *storageapi.Local {
	t.Helper()
	next := 0
	s, err := core.New(core.Config{Cluster: id, NewVolumeID: func() chain.VolumeID {
		next++
		return chain.VolumeID(fmt.Sprintf("%s-0000-4000-8000-%012d", id[:8], next))
	}}, core.NewMemoryStore(), peers, &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n1", "n2"} {
		if err := s.Report(core.NodeStatus{Node: n, Address: n, Usage: backend.Usage{SizeBytes: 100 << 30, FreeBytes: 100 << 30}}); err != nil {
			t.Fatal(err)
		}
	}
	return storageapi.NewLocal(s)
}

// pair is two sites whose control planes reach each other through their HTTPS
// APIs, with a client of each.
type pair struct {
	ca       *storageapitest.CA
	servers  map[chain.ClusterID]*storageapitest.Server
	clients  map[chain.ClusterID]*storageapi.Client
	locals   map[chain.ClusterID]*storageapi.Local
	peerMaps map[chain.ClusterID]map[chain.ClusterID]storageapi.Cluster
}

func newPair(t testing.TB) *pair {
	t.Helper()
	ca, err := storageapitest.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	p := &pair{ca: ca, servers: map[chain.ClusterID]*storageapitest.Server{}, clients: map[chain.ClusterID]*storageapi.Client{},
		locals: map[chain.ClusterID]*storageapi.Local{}, peerMaps: map[chain.ClusterID]map[chain.ClusterID]storageapi.Cluster{}}
	for _, id := range []chain.ClusterID{clusterA, clusterB} {
		p.peerMaps[id] = map[chain.ClusterID]storageapi.Cluster{}
		p.locals[id] = newSite(t, id, storageapi.Peers{Clusters: p.peerMaps[id], CallTimeout: 5 * time.Second})
		server, err := storageapitest.Serve(ca, p.locals[id], "secret-of-"+string(id[:8]))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(server.Close)
		p.servers[id] = server
		if p.clients[id], err = server.Client(ca); err != nil {
			t.Fatal(err)
		}
	}
	p.peerMaps[clusterA][clusterB] = p.clients[clusterB]
	p.peerMaps[clusterB][clusterA] = p.clients[clusterA]
	return p
}
