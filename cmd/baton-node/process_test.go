package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/internal/pki"
	"github.com/baton-dr/baton/internal/syncio"
	"github.com/baton-dr/baton/node/leftovers"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

const (
	secret    = "the-cluster-secret-of-site-a"
	waitLimit = 2 * time.Minute
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the node agent attaches loop devices and mounts btrfs (CI runs as root)")
	}
}

// authority is a throw-away CA whose certificates are written to files, as
// the node agent reads them.
type authority struct {
	ca   *pki.CA
	file string // the CA's PEM
}

func newAuthority(t *testing.T, dir string) *authority {
	t.Helper()
	ca, err := pki.NewCA("baton-node test CA", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	a := &authority{ca: ca, file: filepath.Join(dir, "ca.pem")}
	writeFile(t, a.file, ca.CertPEM)
	return a
}

// issue makes a server certificate for 127.0.0.1 and writes it and its key.
func (a *authority) issue(t *testing.T, dir, name string) (certFile, keyFile string, cert tls.Certificate) {
	t.Helper()
	leaf, err := a.ca.Issue(name, pki.Names{IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	writeFile(t, certFile, leaf.CertPEM)
	writeFile(t, keyFile, leaf.KeyPEM)
	return certFile, keyFile, leaf.TLS
}

func writeFile(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// apiSite is site A's control plane behind its storage API, served over
// HTTPS in the test's process.
type apiSite struct {
	mu    sync.Mutex
	site  *core.Site
	store *core.MemoryStore
	local *storageapi.Local
	url   string
}

func newAPISite(t *testing.T, ca *authority, dir string) *apiSite {
	t.Helper()
	s := &apiSite{store: core.NewMemoryStore()}
	next := 0
	control, err := core.New(core.Config{Cluster: clusterA, NewVolumeID: func() chain.VolumeID {
		next++
		return chain.VolumeID(fmt.Sprintf("aaaaaaaa-0000-4000-8000-%012d", next))
	}}, s.store, storageapi.Peers{}, wallClock{})
	if err != nil {
		t.Fatal(err)
	}
	s.site = control
	s.local = storageapi.NewLocalWith(func(context.Context) (*core.Site, func(), error) {
		s.mu.Lock()
		return control, s.mu.Unlock, nil
	}, control.Cluster)
	handler, err := storageapi.NewServer(s.local, secret, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	_, _, cert := ca.issue(t, dir, "storage-api")
	server := httptest.NewUnstartedServer(handler)
	server.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	server.StartTLS()
	t.Cleanup(server.Close)
	s.url = server.URL
	return s
}

func (s *apiSite) node(name string) (core.Node, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	nodes, _ := s.store.Nodes()
	i := slices.IndexFunc(nodes, func(n core.Node) bool { return n.Name == name })
	if i < 0 {
		return core.Node{}, false
	}
	return nodes[i], true
}

// agentProcess is baton-node running as its own process.
type agentProcess struct {
	cmd     *osexec.Cmd
	logs    *syncio.Buffer
	metrics string // the /metrics URL
	exited  chan error
}

// freePort finds a loopback port nobody listens on (the agent needs it in
// two flags: --stream-address and --advertise-address).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// bed is what one node agent process needs on disk.
type bed struct {
	dir, poolDir, deviceDir, secretFile, discoveryFile string
	ca                                                 *authority
	api                                                *apiSite
}

func newBed(t *testing.T) *bed {
	t.Helper()
	needRoot(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := &bed{dir: dir, poolDir: filepath.Join(dir, "pool"), deviceDir: filepath.Join(dir, "devices"),
		secretFile: filepath.Join(dir, "clusters"), discoveryFile: filepath.Join(dir, "discovery.json")}
	b.ca = newAuthority(t, dir)
	b.api = newAPISite(t, b.ca, dir)
	doc := fmt.Sprintf(`{"clusters":[{"cluster_id":%q,"cluster_endpoint":%q,"cluster_secret":%q,"local":true}]}`,
		clusterA, b.api.url, secret)
	if err := os.WriteFile(b.secretFile, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { scrub(t, dir) })
	return b
}

// start runs baton-node over the bed; the test's end kills it if it still
// runs.
func (b *bed) start(t *testing.T) *agentProcess {
	t.Helper()
	certFile, keyFile, _ := b.ca.issue(t, b.dir, "stream-"+freePort(t))
	streamPort, metricsPort := freePort(t), freePort(t)
	p := &agentProcess{logs: &syncio.Buffer{}, metrics: "http://127.0.0.1:" + metricsPort + "/metrics", exited: make(chan error, 1)}
	p.cmd = osexec.Command(os.Args[0], "--node", "n1", "--secret-file", b.secretFile, "--ca-file", b.ca.file,
		"--backend", "btrfs", "--pool-dir", b.poolDir, "--pool-size-bytes", strconv.Itoa(1<<30), "--device-dir", b.deviceDir,
		"--stream-address", "127.0.0.1:"+streamPort, "--advertise-address", "127.0.0.1:"+streamPort,
		"--stream-cert", certFile, "--stream-key", keyFile, "--peer-ca-file", b.ca.file, "--interval", "100ms",
		"--metrics-bind-address", "127.0.0.1:"+metricsPort, "--discovery-file", b.discoveryFile, "-v", "1")
	p.cmd.Env = append(os.Environ(), asMain+"=1")
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// terminate sends SIGTERM and waits for a clean exit.
func (p *agentProcess) terminate(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("baton-node exited with %v after SIGTERM; its logs:\n%s", err, p.logs)
		}
	case <-time.After(waitLimit):
		t.Fatalf("baton-node still runs %s after SIGTERM; its logs:\n%s", waitLimit, p.logs)
	}
	if strings.Contains(p.logs.String(), secret) {
		t.Fatalf("the logs carry the cluster secret:\n%s", p.logs)
	}
}

// waitFor checks cond every 100 ms until it holds or waitLimit passes.
func waitFor(t *testing.T, p *agentProcess, what string, cond func() error) {
	t.Helper()
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		select {
		case <-ticker.C:
		case err := <-p.exited:
			t.Fatalf("%s: baton-node exited (%v); its logs:\n%s", what, err, p.logs)
		case <-deadline.C:
			t.Fatalf("%s: still %v after %s; the agent's logs:\n%s", what, err, waitLimit, p.logs)
		}
	}
}

// createVolume creates a volume and waits for the agent to make and link it.
func (b *bed) createVolume(t *testing.T, p *agentProcess) (core.Volume, string) {
	t.Helper()
	waitFor(t, p, "this agent passes and n1 reports", func() error {
		if passes := reconciledPasses(p.metrics); passes < 1 {
			return fmt.Errorf("%v reconciled passes", passes)
		}
		if n, ok := b.api.node("n1"); !ok || n.Usage.SizeBytes == 0 {
			return fmt.Errorf("node record %+v", n)
		}
		return nil
	})
	v, err := b.api.local.CreateVolume(context.Background(), core.CreateRequest{Name: "pvc-1",
		Shape: core.Shape{SizeBytes: 128 << 20, Provisioning: backend.Thin, PlaceCount: 1, VolumeMode: core.Filesystem}})
	if err != nil {
		t.Fatal(err)
	}
	var device string
	waitFor(t, p, "the volume is made and linked", func() error {
		record, err := b.api.local.Volume(context.Background(), v.Ref)
		if err != nil || !slices.Contains(record.Present, "n1") {
			return fmt.Errorf("present on %v (%v)", record.Present, err)
		}
		device, err = filepath.EvalSymlinks(filepath.Join(b.deviceDir, v.Dataset()))
		return err
	})
	return v, device
}

// TestSIGTERMLeavesNothingBehind runs baton-node as a process against a
// storage API over HTTPS: it reports, makes a volume and links its loop
// device, serves metrics, publishes its discovery entry; SIGTERM stops it
// with exit status 0, no mount and no loop device left, and no secret in its
// logs.
func TestSIGTERMLeavesNothingBehind(t *testing.T) {
	b := newBed(t)
	before := loopsUnder(t, b.dir)
	p := b.start(t)
	b.createVolume(t, p)
	if len(loopsUnder(t, b.dir)) != 2 || len(mountsUnder(t, b.dir)) != 1 {
		t.Fatalf("while running: loops %v, mounts %v; want the pool's and the volume's loop, the pool's mount",
			loopsUnder(t, b.dir), mountsUnder(t, b.dir))
	}
	metrics := scrape(t, p.metrics)
	for _, want := range []string{`baton_node_passes_total{result="reconciled"}`, `baton_node_streams_total{direction="receive"} 0`,
		"baton_node_pass_duration_seconds_count", "go_goroutines"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	data, err := os.ReadFile(b.discoveryFile)
	if err != nil {
		t.Fatal(err)
	}
	candidates, err := sitecontroller.ParseCandidates(data)
	if err != nil || len(candidates) != 1 || candidates[0].Name != "n1" || candidates[0].Address != "127.0.0.1" ||
		!slices.ContainsFunc(candidates[0].Devices, func(d v1.CandidateDevice) bool { return d.Path == filepath.Join(b.poolDir, "pool.img") }) {
		t.Fatalf("the operator reads the discovery file as %+v (%v)", candidates, err)
	}

	p.terminate(t)
	if loops := loopsUnder(t, b.dir); !slices.Equal(loops, before) {
		t.Errorf("loop devices after SIGTERM: %v", loops)
	}
	if mounts := mountsUnder(t, b.dir); len(mounts) > 0 {
		t.Errorf("mounts after SIGTERM: %v", mounts)
	}
	if links, _ := os.ReadDir(b.deviceDir); len(links) > 0 {
		t.Errorf("device links after SIGTERM: %v", links)
	}
	if !strings.Contains(p.logs.String(), "node agent stopped") {
		t.Errorf("the logs do not say the agent stopped:\n%s", p.logs)
	}
}

// TestAStopNeverPullsAMountedDevice: SIGTERM while a filesystem on a volume
// is mounted leaves the volume's loop device and the pool in place (exit 0);
// the next start adopts them and links the same device; once the filesystem
// is unmounted, a stop leaves nothing behind.
func TestAStopNeverPullsAMountedDevice(t *testing.T) {
	b := newBed(t)
	p := b.start(t)
	_, device := b.createVolume(t, p)
	app := filepath.Join(b.dir, "app")
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := osexec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v: %s", name, args, err, out)
		}
	}
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	run("mkfs.ext4", "-q", device)
	run("mount", device, app)
	if err := os.WriteFile(filepath.Join(app, "data"), []byte("written before the stop"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("sync")

	p.terminate(t)
	if !strings.Contains(p.logs.String(), "leaving the pool open") {
		t.Fatalf("the agent does not say it left the pool open:\n%s", p.logs)
	}
	if len(loopsUnder(t, b.poolDir)) != 2 {
		t.Fatalf("after a stop under a mounted volume: loops %v, want the pool's and the volume's", loopsUnder(t, b.poolDir))
	}

	again := b.start(t)
	_, adopted := b.createVolume(t, again)
	if adopted != device {
		t.Fatalf("the restarted agent links %s, the mounted filesystem is on %s", adopted, device)
	}
	if got, err := os.ReadFile(filepath.Join(app, "data")); err != nil || string(got) != "written before the stop" {
		t.Fatalf("the mounted filesystem after the restart: %q %v", got, err)
	}
	run("umount", app)
	again.terminate(t)
	if loops, mounts := loopsUnder(t, b.dir), mountsUnder(t, b.dir); len(loops) > 0 || len(mounts) > 0 {
		t.Fatalf("after the last stop: loops %v, mounts %v", loops, mounts)
	}
}

// reconciledPasses reads baton_node_passes_total{result="reconciled"} from
// the agent's metrics; -1 while they cannot be read.
func reconciledPasses(url string) float64 {
	response, err := http.Get(url)
	if err != nil {
		return -1
	}
	defer response.Body.Close()
	body, err := io.ReadAll(response.Body)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(body), "\n") {
		if value, ok := strings.CutPrefix(line, `baton_node_passes_total{result="reconciled"} `); ok {
			if f, err := strconv.ParseFloat(value, 64); err == nil {
				return f
			}
		}
	}
	return -1
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	response, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	body, err := io.ReadAll(response.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// loopsUnder lists the loop devices whose backing file is under dir.
func loopsUnder(t *testing.T, dir string) []string {
	t.Helper()
	loops, err := leftovers.Loops(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return loops
}

// mountsUnder lists the mount points under dir, deepest last.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	mounts, err := leftovers.Mounts(dir)
	if err != nil {
		t.Fatal(err)
	}
	return mounts
}

// scrub unmounts and detaches whatever a failed test left under dir, so one
// failure does not leak into the machine.
func scrub(t *testing.T, dir string) {
	if _, _, err := leftovers.Scrub(context.Background(), dir); err != nil {
		t.Log(err)
	}
}
