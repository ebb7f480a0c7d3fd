package storageapi_test

import (
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/core/coretest"
	"github.com/baton-dr/baton/storageapi"
	"github.com/baton-dr/baton/storageapi/storageapitest"
)

const (
	clusterA = coretest.ClusterA
	clusterB = coretest.ClusterB
)

// newSite is a site over a memory store with two 100 GiB nodes, n1 and n2.
func newSite(t testing.TB, id chain.ClusterID, peers core.Peers) *storageapi.Local {
	t.Helper()
	s, err := core.New(core.Config{Cluster: id, NewVolumeID: coretest.VolumeIDs(id)},
		core.NewMemoryStore(), peers, coretest.NewClock(coretest.Epoch))
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
