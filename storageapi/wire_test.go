package storageapi_test

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
	"github.com/baton-dr/baton/storageapi/storageapitest"
)

var updateWire = flag.Bool("update-wire", false, "rewrite testdata/wire.golden from this run")

// transcript records every exchange the servers it wraps answer, in order.
type transcript struct {
	mu  sync.Mutex
	out bytes.Buffer
}

func (tr *transcript) wrap(id chain.ClusterID, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		tr.mu.Lock()
		fmt.Fprintf(&tr.out, "=== %s %s %s\n", id[:8], r.Method, r.RequestURI)
		fmt.Fprintf(&tr.out, "> Content-Type: %s\n> %s\n", r.Header.Get("Content-Type"), body)
		fmt.Fprintf(&tr.out, "< %d Content-Type: %s\n< %s\n", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Bytes())
		tr.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// recordedPair is newPair with every request and answer of both sites'
// servers recorded.
// raw sends to A what Client would never send, with A's secret.
func recordedPair(t *testing.T, tr *transcript) (clients map[chain.ClusterID]*storageapi.Client, raw func(method, path, body string) error) {
	t.Helper()
	ca, err := storageapitest.NewCA()
	must(t, err)
	cert, err := ca.ServerCertificate()
	must(t, err)
	clients = map[chain.ClusterID]*storageapi.Client{}
	endpoints := map[chain.ClusterID]string{}
	peerMaps := map[chain.ClusterID]map[chain.ClusterID]storageapi.Cluster{}
	for _, id := range []chain.ClusterID{clusterA, clusterB} {
		peerMaps[id] = map[chain.ClusterID]storageapi.Cluster{}
		local := newSite(t, id, storageapi.Peers{Clusters: peerMaps[id], CallTimeout: 5 * time.Second})
		secret := "secret-of-" + string(id[:8])
		handler, err := storageapi.NewServer(local, secret, logr.Discard())
		must(t, err)
		server := httptest.NewUnstartedServer(tr.wrap(id, handler))
		server.Config.ErrorLog = log.New(io.Discard, "", 0)
		server.TLS = ca.ClientTLS().Clone()
		server.TLS.Certificates = append(server.TLS.Certificates, cert)
		server.StartTLS()
		t.Cleanup(server.Close)
		endpoints[id] = server.URL
		clients[id], err = storageapi.NewClient(storageapi.ClientConfig{ID: id, Endpoint: server.URL, Secret: secret,
			TLS: ca.ClientTLS(), CallTimeout: 5 * time.Second})
		must(t, err)
	}
	peerMaps[clusterA][clusterB] = clients[clusterB]
	peerMaps[clusterB][clusterA] = clients[clusterA]
	plain := &http.Client{Transport: &http.Transport{TLSClientConfig: ca.ClientTLS()}}
	t.Cleanup(plain.CloseIdleConnections)
	raw = func(method, path, body string) error {
		request, err := http.NewRequestWithContext(ctx, method, endpoints[clusterA]+path, strings.NewReader(body))
		must(t, err)
		request.Header.Set("Authorization", "Bearer secret-of-"+string(clusterA[:8]))
		response, err := plain.Do(request)
		must(t, err)
		defer response.Body.Close()
		data, err := io.ReadAll(response.Body)
		must(t, err)
		return storageapi.AnswerError(clusterA, method, path, response.StatusCode, response.Header.Get("Content-Type"), data)
	}
	return clients, raw
}

// TestTheWireFormatIsUnchanged makes every operation of the API, and the
// refusals the server makes before an operation runs, through Client and
// Server, and compares what crossed the wire -- method, path, bodies,
// statuses -- with testdata/wire.golden byte for byte: the wire is a
// contract with the sites and nodes of other versions.
func TestTheWireFormatIsUnchanged(t *testing.T) {
	tr := &transcript{}
	clients, raw := recordedPair(t, tr)
	a, b := clients[clusterA], clients[clusterB]
	note := func(what string, err error) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		fmt.Fprintf(&tr.out, "--- %s: %v\n", what, err)
	}

	v, err := a.CreateVolume(ctx, core.CreateRequest{Name: "db", Shape: shape(1 << 30)})
	note("CreateVolume", err)
	_, err = a.Volume(ctx, v.Ref)
	note("Volume", err)
	_, err = a.ExpandVolume(ctx, v.Ref, 2<<30)
	note("ExpandVolume", err)
	other := "n1"
	if v.Primary == other {
		other = "n2"
	}
	_, err = a.Attach(ctx, v.Ref, other)
	note("Attach", err)
	note("RecordFilesystem", a.RecordFilesystem(ctx, v.Ref, "xfs"))
	_, err = a.Capacity(ctx, 1)
	note("Capacity", err)
	snap, err := a.CreateSnapshot(ctx, v.Ref, "snap")
	note("CreateSnapshot", err)
	_, err = a.ListSnapshots(ctx)
	note("ListSnapshots", err)
	clone, err := a.CreateVolumeFrom(ctx, core.CreateRequest{Name: "restored", Shape: shape(2 << 30)}, core.CloneSource{Snapshot: snap.Ref})
	note("CreateVolumeFrom snapshot", err)
	_, err = a.CreateVolumeFrom(ctx, core.CreateRequest{Name: "copy", Shape: shape(2 << 30)}, core.CloneSource{Volume: v.Ref})
	note("CreateVolumeFrom volume", err)
	note("DeleteSnapshot", a.DeleteSnapshot(ctx, snap.Ref))
	note("Enable", a.Enable(ctx, v.Ref, clusterB))
	_, err = a.Spec(ctx, v.Home)
	note("Spec", err)
	note("Report", a.Report(ctx, core.NodeStatus{Node: v.Home, Usage: backend.Usage{SizeBytes: 100 << 30},
		Datasets: []core.DatasetStatus{{Name: v.Dataset(), Snapshots: []core.SnapshotInfo{{Name: "baton-000001", GUID: "g1"}}}}}))
	_, err = b.Members(ctx, v.Ref)
	note("Members (none)", err)
	_, err = a.Members(ctx, v.Ref)
	note("Members", err)
	_, err = a.Holdings(ctx, v.Ref)
	note("Holdings", err)
	_, err = a.Status(ctx, v.Ref)
	note("Status", err)
	note("Demote", a.Demote(ctx, v.Ref))
	_, err = a.Handover(ctx, v.Ref)
	note("Handover", err)
	_, err = a.Resync(ctx, v.Ref, clusterB)
	note("Resync", err)
	note("Disable", a.Disable(ctx, v.Ref))
	_, err = b.PrepareReceive(ctx, core.ReceiveRequest{Source: v.Ref, Root: v.Ref, Shape: v.Shape})
	note("PrepareReceive", err)
	note("LearnSuccessor", a.LearnSuccessor(ctx, v.Ref, chain.Ref{Cluster: clusterB, Volume: "bbbbbbbb-0000-4000-8000-000000000099"}))
	_, err = b.Failover(ctx, v.Ref, true)
	note("Failover", err)
	_, err = b.ListSnapshots(ctx)
	note("ListSnapshots (none)", err)
	_, err = b.Holdings(ctx, v.Ref)
	note("Holdings (none)", err)
	note("DeleteVolume", a.DeleteVolume(ctx, clone.Ref))

	// What the server refuses before any operation runs.
	stranger := chain.Ref{Cluster: clusterA, Volume: "aaaaaaaa-0000-4000-8000-000000000777"}
	_, err = a.Volume(ctx, stranger)
	note("Volume of a stranger", err)
	note("Enable to a malformed cluster", a.Enable(ctx, v.Ref, "not-a-uuid"))
	_, err = a.Resync(ctx, v.Ref, "NOT-LOWER")
	note("Resync from a malformed cluster", err)
	note("LearnSuccessor of a malformed ref", a.LearnSuccessor(ctx, v.Ref, chain.Ref{Cluster: clusterB, Volume: "x"}))
	_, err = a.CreateSnapshot(ctx, chain.Ref{Cluster: "x", Volume: "y"}, "s")
	note("CreateSnapshot of a malformed member", err)
	note("DeleteSnapshot of a malformed snapshot", a.DeleteSnapshot(ctx, core.SnapshotRef{Member: v.Ref, Snapshot: "not-a-uuid"}))
	_, err = a.PrepareReceive(ctx, core.ReceiveRequest{Source: chain.Ref{Cluster: "x"}, Root: v.Ref})
	note("PrepareReceive of a malformed source", err)
	_, err = a.CreateVolumeFrom(ctx, core.CreateRequest{Name: "bad", Shape: shape(1 << 30)}, core.CloneSource{Volume: chain.Ref{Cluster: "x"}})
	note("CreateVolumeFrom a malformed volume", err)
	_, err = a.Volume(ctx, chain.Ref{Cluster: "x", Volume: "y"})
	note("Volume of a malformed ref", err)
	for _, r := range []struct{ method, path, body string }{
		{http.MethodPost, "/v1/volumes/" + v.Ref.String() + "/expand", `{"SizeBytes":1,"Extra":2}`},
		{http.MethodPost, "/v1/volumes/" + v.Ref.String() + "/attach", `{"Node":"n1"} {}`},
		{http.MethodPost, "/v1/volumes", `{`},
		{http.MethodGet, "/v1/capacity?place_count=two", ``},
		{http.MethodPost, "/v1/nodes/n1/report", `{"Node":"n2"}`},
		{http.MethodGet, "/v1/nowhere", ``},
		{http.MethodPut, "/v1/volumes", ``},
	} {
		note(r.method+" "+r.path, raw(r.method, r.path, r.body))
	}

	golden := "testdata/wire.golden"
	got := tr.out.Bytes()
	if *updateWire {
		must(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	must(t, err)
	if !bytes.Equal(got, want) {
		gotLines, wantLines := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gotLines) && i < len(wantLines); i++ {
			if gotLines[i] != wantLines[i] {
				t.Fatalf("the wire changed at line %d of %s:\n got %s\nwant %s\n(-update-wire rewrites it)", i+1, golden, gotLines[i], wantLines[i])
			}
		}
		t.Fatalf("the wire changed: %d lines, %s has %d (-update-wire rewrites it)", len(gotLines), golden, len(wantLines))
	}
}
