package real

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/bed/real/infra"
	"github.com/baton-dr/baton/bed/real/webapps"
	"github.com/baton-dr/baton/internal/poll"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/workload"
)

// AppImages are the application images ci/realbed/apps/images.sh built,
// by name: mariadb, wordpress, gitea.
type AppImages map[string]string

// ReadAppImages reads images.sh's name=image lines; a missing file is
// named with the script that writes it.
func ReadAppImages(path string) (AppImages, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no application images (%s is missing): ci/realbed/apps/images.sh builds them", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	images := AppImages{}
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		name, image, ok := strings.Cut(strings.TrimSpace(lines.Text()), "=")
		if !ok || name == "" || image == "" {
			return nil, fmt.Errorf("%s: %q is not a name=image line", path, lines.Text())
		}
		images[name] = image
	}
	if err := lines.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, name := range []string{"mariadb", "wordpress", "gitea"} {
		if images[name] == "" {
			return nil, fmt.Errorf("%s names no %s image (ci/realbed/apps/images.sh writes it)", path, name)
		}
	}
	return images, nil
}

// webVolumeBytes is a real application's claim's size: 512 MiB for a
// database (MariaDB's datadir holds a 96 MiB redo log and its
// tablespaces), 256 MiB for the others.
func webVolumeBytes(name string) uint64 {
	if name == workload.WordPressDatabase || name == workload.GiteaDatabase {
		return 512 << 20
	}
	return 256 << 20
}

// webNodePort is the lowest NodePort the bed gives an application: each
// takes the lowest port from it that no Service holds on either site
// (freeNodePort), the same on both, so that a run's applications never wait
// for the previous run's namespace -- whose Services hold their ports until
// it is gone -- to go.
const webNodePort = 30080

// freeNodePort is the lowest port from webNodePort that no Service of any
// namespace holds on any site, nor any application of the bed, nor one a
// bed beside it in this process took and has not made its Service for yet
// (portsTaken): the port is the bed's from then on, until it closes.
func (b *Bed) freeNodePort(ctx context.Context) (int32, error) {
	portsTaken.mu.Lock()
	defer portsTaken.mu.Unlock()
	held := map[int32]bool{}
	for port := range portsTaken.by {
		held[port] = true
	}
	for _, a := range b.held {
		if a.web != nil {
			held[a.web.nodePort] = true
		}
	}
	for _, s := range b.sites {
		services, err := s.client.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, fmt.Errorf("%s: list the Services for a free NodePort: %w", s.Name, err)
		}
		for _, svc := range services.Items {
			for _, p := range svc.Spec.Ports {
				held[p.NodePort] = true
			}
		}
	}
	for port := int32(webNodePort); port <= 32767; port++ {
		if !held[port] {
			portsTaken.by[port] = b.run
			return port, nil
		}
	}
	return 0, fmt.Errorf("no NodePort free from %d on the sites", webNodePort)
}

// portsTaken are the NodePorts the beds of this process took, by run: two
// beds side by side list the Services before either made its own.
var portsTaken = struct {
	mu sync.Mutex
	by map[int32]string
}{by: map[int32]string{}}

// releaseNodePorts gives back the bed's ports once its namespaces are going.
func (b *Bed) releaseNodePorts() {
	portsTaken.mu.Lock()
	defer portsTaken.mu.Unlock()
	maps.DeleteFunc(portsTaken.by, func(_ int32, run string) bool { return run == b.run })
}

// webApp is an application the bed runs as itself -- WordPress (MariaDB
// and apache2) or Gitea, the images ci/realbed/apps builds -- in the site's
// namespace of the run, on file-system claims, and writes through its HTTP
// API (bed/real/webapps): every operation journaled, every acknowledged one
// read back after each move through the same API.
type webApp struct {
	bed      *Bed
	name     string
	images   []string
	objects  webapps.Objects // the Secret, Deployments and Services; the claims are the bed's
	nodePort int32
	// client is the instance the scenario follows: its journal is the run's.
	client webapps.App
	// site is where client's instance serves (deployWeb).
	site string
	// found is what the last read-back found, for Resume.
	found webapps.Verdict
	// mu is held around each of client's operations and its read-backs:
	// a client performs one at a time.
	mu     sync.Mutex
	writer *webWriter
	// tail is the instance left writing on the old site after an unplanned
	// fail-over, until the hub reaches that site again.
	tail   *webTail
	loaded map[string]bool // the sites whose node has the images
	// changes are the content every operation of client sent, by volume,
	// for the syncs' bytes changed.
	changesMu sync.Mutex
	changes   []change
}

// recordChanges notes what an operation sent to each volume.
func (w *webApp) recordChanges(write webapps.Write) {
	w.changesMu.Lock()
	defer w.changesMu.Unlock()
	for _, p := range write.Parts {
		w.changes = append(w.changes, change{volume: p.Volume, at: write.Issued, bytes: p.Bytes})
	}
}

// changedBetween is the content sent to the volume by the operations issued
// after after and not after until.
func (w *webApp) changedBetween(volume string, after, until time.Time) uint64 {
	w.changesMu.Lock()
	defer w.changesMu.Unlock()
	var n uint64
	for _, c := range w.changes {
		if c.volume == volume && c.at.After(after) && !c.at.After(until) {
			n += uint64(c.bytes)
		}
	}
	return n
}

// newWebApp builds the application's objects for the run's namespace and
// its client, pointed at the site it starts on.
func (b *Bed) newWebApp(ctx context.Context, spec bed.App, s *site) (*webApp, error) {
	images := b.options.AppImages
	rng := rand.New(rand.NewPCG(b.options.Seed, 0x7765626170707300|uint64(len(b.apps.All()))))
	port, err := b.freeNodePort(ctx)
	if err != nil {
		return nil, err
	}
	w := &webApp{bed: b, name: spec.Name, nodePort: port, loaded: map[string]bool{}}
	placement := webapps.Placement{Namespace: b.namespace(), NodePort: w.nodePort, ExistingClaims: true}
	config := webapps.Config{Name: spec.Name, URL: w.url(s), Seed: b.options.Seed}
	switch spec.Kind {
	case bed.WordPress:
		database, admin, app := webapps.Password(rng), webapps.Password(rng), webapps.Password(rng)
		w.images = []string{images["mariadb"], images["wordpress"]}
		w.objects, err = webapps.WordPressObjects(webapps.WordPressSpec{Name: spec.Name, Placement: placement,
			Database: webapps.Claim{Name: workload.WordPressDatabase}, Uploads: webapps.Claim{Name: workload.WordPressUploads},
			MariaDBImage: images["mariadb"], WordPressImage: images["wordpress"],
			DatabasePassword: database, AdminPassword: admin, AppPassword: app})
		if err == nil {
			config.User, config.Password = webapps.WordPressAdmin, app
			w.client, err = webapps.NewWordPress(config)
		}
	case bed.Gitea:
		admin := webapps.Password(rng)
		w.images = []string{images["gitea"]}
		w.objects, err = webapps.GiteaObjects(webapps.GiteaSpec{Name: spec.Name, Placement: placement,
			Repositories: webapps.Claim{Name: workload.GiteaRepositories}, Database: webapps.Claim{Name: workload.GiteaDatabase},
			Image: images["gitea"], AdminPassword: admin})
		if err == nil {
			config.User, config.Password = webapps.GiteaAdmin, admin
			w.client, err = webapps.NewGitea(config)
		}
	default:
		return nil, fmt.Errorf("%s: the real bed runs WordPress and Gitea as themselves, not %q", spec.Name, spec.Kind)
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}

// url is where the host reaches the application on site: its NodePort on
// the node's address. A partition cuts nodes from each other, never the
// host from a node, so the bed reaches an isolated site's instance too.
func (w *webApp) url(s *site) string { return fmt.Sprintf("http://%s:%d", s.nodeIP, w.nodePort) }

// deployWeb loads the images into the site's node (once), creates the
// application's objects there (those that exist stay) and waits until it
// answers.
func (b *Bed) deployWeb(ctx context.Context, w *webApp, s *site) error {
	if !w.loaded[s.Site] {
		if _, err := infra.LoadImages(ctx, s.Cluster, w.images...); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		w.loaded[s.Site] = true
	}
	for _, o := range w.objects.All() {
		o = o.DeepCopyObject().(ctrlclient.Object) // Get and Create fill in the one they are given
		// Looked up first: creating a NodePort Service that exists is
		// refused as a port already allocated, not as existing.
		err := s.objects.Get(ctx, ctrlclient.ObjectKeyFromObject(o), o.DeepCopyObject().(ctrlclient.Object))
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: %s's %s %s: %w", s.Name, w.name, o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
		if err := s.objects.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: create %s's %s %s: %w", s.Name, w.name, o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
	w.site = s.Site
	return w.client.Retarget(w.url(s))
}

// undeployWeb deletes the application's Deployments on the site and waits
// until its pods are gone (kubelet has unmounted and unstaged the volumes;
// MariaDB shut down cleanly if it could within its grace period).
func (b *Bed) undeployWeb(ctx context.Context, w *webApp, s *site) error {
	background := metav1.DeletePropagationBackground
	namespace := w.objects.Deployments[0].Namespace // the run's, or a drill's copy's
	for _, d := range w.objects.Deployments {
		err := s.client.AppsV1().Deployments(namespace).Delete(ctx, d.Name, metav1.DeleteOptions{PropagationPolicy: &background})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: delete %s's Deployment %s: %w", s.Name, w.name, d.Name, err)
		}
	}
	selector := "app.kubernetes.io/instance=" + w.name
	return poll.Until(ctx, b.options.ActionLimit, func() (bool, string) {
		pods, err := s.client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err.Error()
		}
		if len(pods.Items) == 0 {
			return true, ""
		}
		return false, fmt.Sprintf("%d of %s's pods still there (%s)", len(pods.Items), w.name, podPhases(pods.Items))
	})
}

func podPhases(pods []corev1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name+" "+podWaiting(&p))
	}
	return strings.Join(out, "; ")
}

// webReadyLimit bounds an application's coming up on a site, crash recovery
// included, in wall time.
const webReadyLimit = 5 * time.Minute

// setup waits until the application answers on its site and makes what
// its operations need (Gitea's token and repository).
func (w *webApp) setup(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.client.Setup(ctx, webReadyLimit)
}

// readBack reads everything back through the application's API and judges
// it against the journal; recoveryPoint splits the losses (zero: none).
func (w *webApp) readBack(ctx context.Context, recoveryPoint time.Time) (webapps.Verdict, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.client.ReadBack(ctx, recoveryPoint, webReadyLimit)
}

// resume goes on from what a move's read-back found.
func (w *webApp) resume(v webapps.Verdict) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.client.Journal().Resume(v)
}

// webWriter keeps an application writing, one operation every period, in
// a goroutine of its own (an operation is an HTTP call that may take
// seconds; the bed's loop must not wait for it).
type webWriter struct {
	site         string
	stop, done   chan struct{}
	acknowledged atomic.Int64 // since the bed last read it
	// failing counts the operations not acknowledged in a row; lastError
	// says why the last was not.
	failing   atomic.Int64
	lastError atomic.Pointer[string]
}

// refusingAfter is how many operations in a row a primary's application
// may fail before the bed calls it a refusal: one may time out on a host
// whose load reaches 50, three in a row do not.
const refusingAfter = 3

// startWriter starts app writing on site; mu is held around each
// operation. setup first sets the client up (the tail's Gitea client has
// no token yet) in the writer's goroutine, so that a tail on a site that
// no longer answers costs the bed's loop nothing.
func startWriter(app webapps.App, mu *sync.Mutex, site string, period time.Duration, setup bool, record func(webapps.Write)) *webWriter {
	w := &webWriter{site: site, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		if setup {
			mu.Lock()
			_ = app.Setup(context.Background(), time.Minute) // a tail that cannot write is no fault
			mu.Unlock()
		}
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			default:
			}
			mu.Lock()
			// The operation in flight when the writer is stopped finishes:
			// one cut short would be unknown for no reason.
			write, err := app.Step(context.Background())
			mu.Unlock()
			if write.Outcome == webapps.Acknowledged {
				w.acknowledged.Add(1)
				w.failing.Store(0)
			} else {
				w.failing.Add(1)
				why := fmt.Sprintf("%s %s: %s", write.Operation, write.Key, write.Detail)
				if err != nil && write.Detail == "" {
					why = err.Error()
				}
				w.lastError.Store(&why)
			}
			if record != nil && write.Seq != 0 {
				record(write)
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// Stop stops the writer once its operation in flight finished.
func (w *webWriter) Stop() {
	if w == nil {
		return
	}
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// drain returns, and forgets, how many operations were acknowledged since
// it was last asked.
func (w *webWriter) drain() int64 { return w.acknowledged.Swap(0) }

// webTail is the instance left running on the old site after an unplanned
// fail-over: a client of its own (its own journal and keys, name~tail),
// writing to the old site's application until the hub reaches that site
// again and deletes its pods. What it wrote must be gone once the old site
// resynced: the scenario's client finds any of it as written by no
// operation.
func (b *Bed) webTail(w *webApp, old *site) (*webTail, error) {
	t := &webTail{}
	config := webapps.Config{Name: w.name + "-tail", URL: w.url(old), Seed: b.options.Seed + 1}
	var err error
	switch c := w.client.(type) {
	case *webapps.WordPress:
		config.User, config.Password = webapps.WordPressAdmin, w.objects.Secrets[0].StringData["application-password"]
		t.client, err = webapps.NewWordPress(config)
	case *webapps.Gitea:
		config.User, config.Password = webapps.GiteaAdmin, w.objects.Secrets[0].StringData["admin-password"]
		t.client, err = webapps.NewGitea(config)
	default:
		err = fmt.Errorf("%s: no tail for a %T", w.name, c)
	}
	if err != nil {
		return nil, err
	}
	t.writer = startWriter(t.client, &t.mu, old.Site, b.options.wall(stepPeriod), true, nil)
	t.stop = func() error {
		t.writer.Stop()
		w.tail = nil
		return b.undeployWeb(context.Background(), w, old)
	}
	w.tail = t
	return t, nil
}

type webTail struct {
	client webapps.App
	mu     sync.Mutex
	writer *webWriter
	stop   func() error
}

// The application run as itself, as bed/apps runs it (apps.Application).
var _ apps.Application = (*webApp)(nil)

// Volumes are the application's claims: file systems it mounts.
func (w *webApp) Volumes() []workload.VolumeSpec {
	var out []workload.VolumeSpec
	for _, name := range w.client.Volumes() {
		out = append(out, workload.VolumeSpec{Name: name, SizeBytes: webVolumeBytes(name)})
	}
	return out
}

// Start sets the application up where it runs and starts its writer.
func (w *webApp) Start(apps.Pod) error {
	if err := w.setup(context.Background()); err != nil {
		return fmt.Errorf("%s on %s: %w", w.name, w.site, err)
	}
	w.writer = startWriter(w.client, &w.mu, w.site, w.bed.options.wall(stepPeriod), false, w.recordChanges)
	return nil
}

// Step does nothing: the writer writes on its own (drainWrites counts it).
func (w *webApp) Step(time.Time, apps.Pod) (bool, error) { return false, nil }

// Verify reads back through the application's API every write the journal
// holds and judges it (an application that does not come back -- a database
// that does not recover -- fails it); after an unplanned move its losses are
// split at the recovery point.
func (w *webApp) Verify(_ apps.Pod, _ time.Time, recoveryPoint func() (time.Time, error)) (workload.Verdict, error) {
	var point time.Time
	if recoveryPoint != nil {
		var err error
		if point, err = recoveryPoint(); err != nil {
			return workload.Verdict{}, err
		}
	}
	v, err := w.readBack(context.Background(), point)
	w.found = v
	w.bed.event(w.site, reports.EventAction, "%s read back through its API: %s", w.name, strings.TrimSpace(v.String()))
	return v.Workload(w.client.Volumes()), err
}

// Resume goes on from what the last read-back found and writes again.
func (w *webApp) Resume(pod apps.Pod, _ workload.Verdict) error {
	if err := w.resume(w.found); err != nil {
		return err
	}
	return w.Start(pod)
}

// Tail stops the scenario's client and starts the tail's on the old site.
func (w *webApp) Tail(site string, _ apps.Pod) (*ramen.Tail, error) {
	old, err := w.bed.site(site)
	if err != nil {
		return nil, err
	}
	w.writer.Stop()
	w.writer = nil
	t, err := w.bed.webTail(w, old)
	if err != nil {
		return nil, err
	}
	return &ramen.Tail{Site: site, Stop: t.stop}, nil
}

// drainWrites adds what the writers did since last asked to writes, by
// site; it returns why the primary's application refuses writes (and a key
// that names it once per site), when it
// failed refusingAfter operations in a row (the tail's may: fencing it is
// what a fail-over does).
func (w *webApp) drainWrites(writes map[string]int) (key, refusing string) {
	for _, writer := range []*webWriter{w.writer, w.tailWriter()} {
		if writer == nil {
			continue
		}
		writes[writer.site] += int(writer.drain())
	}
	if w.writer != nil && w.writer.failing.Load() >= refusingAfter {
		why := "no answer"
		if last := w.writer.lastError.Load(); last != nil {
			why = *last
		}
		return "refusing " + w.name + " on " + w.writer.site,
			fmt.Sprintf("%s on %s: %d operations in a row not acknowledged, the last: %s", w.name, w.writer.site, w.writer.failing.Load(), why)
	}
	return "", ""
}

func (w *webApp) tailWriter() *webWriter {
	if w.tail == nil {
		return nil
	}
	return w.tail.writer
}
