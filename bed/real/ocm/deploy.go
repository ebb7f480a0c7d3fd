package ocm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/internal/poll"
	"github.com/baton-dr/baton/internal/steplog"
)

// RequestNamespace is where the bed puts its StorageSiteDeployments on the
// hub.
const RequestNamespace = "baton-requests"

// Request is the bed's request for a site's storage: a discovery of the
// named nodes with the loop files the site's operator proposes, and a
// btrfs pool of one replica per volume (the bed's kernel has no DRBD or
// ZFS), in a StorageCluster named clusterName that ships snapshots every
// replicationInterval (0: the API's default). It is not
// approved: the approval follows the review of the draft (DeployStorage).
func Request(name, site, siteNamespace, clusterName string, nodes []string, replicationInterval time.Duration) *v1.StorageSiteDeployment {
	return &v1.StorageSiteDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: RequestNamespace, Name: name},
		Spec: v1.StorageSiteDeploymentSpec{Site: site, SiteNamespace: siteNamespace,
			Discovery: v1.OperatorOpsSpec{NodeNames: nodes, Devices: v1.DeviceFilter{AllowLoopFiles: true}},
			Sizing: &v1.Sizing{ClusterName: clusterName, StorageLayout: v1.StorageLayout{
				Pool: v1.PoolLayout{Name: "baton", Backend: v1.BackendBtrfs}, PlaceCount: 1,
				ReplicationInterval: metav1.Duration{Duration: replicationInterval}}}},
	}
}

// Transition is one phase the request was seen in, and when.
type Transition struct {
	Phase v1.StorageSiteDeploymentPhase
	// After is the time since the request was submitted.
	After time.Duration
}

// Transitions read as "Pending (0.0 s) -> Discovering (1.2 s) -> ...".
func Transitions(ts []Transition) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%s (%.1f s)", t.Phase, t.After.Seconds()))
	}
	return strings.Join(parts, " -> ")
}

// Deployment follows one StorageSiteDeployment on the hub: a watch records
// every phase the hub writes, whatever the caller does meanwhile (a site
// joining), and prints each with its time.
type Deployment struct {
	hub     client.Client
	key     client.ObjectKey
	started time.Time
	p       *steplog.Log
	stop    context.CancelFunc

	mu   sync.Mutex
	seen []Transition
	last *v1.StorageSiteDeployment
}

// Submit creates the request on the hub (its namespace too), or follows the
// one there is, and starts watching it (Close stops). Its time counts from
// now.
func Submit(ctx context.Context, p *steplog.Log, hub Cluster, request *v1.StorageSiteDeployment) (*Deployment, error) {
	c, err := hub.client()
	if err != nil {
		return nil, err
	}
	watcher, err := client.NewWithWatch(hub.Config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	if err := apply(ctx, c, namespaces(request.Namespace)); err != nil {
		return nil, err
	}
	d := &Deployment{hub: c, key: client.ObjectKeyFromObject(request), started: time.Now(), p: p}
	if err := c.Create(ctx, request.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("failed to create the StorageSiteDeployment %s: %w", d.key, err)
	}
	p.Printf("StorageSiteDeployment %s for %s submitted", d.key, request.Spec.Site)
	watching, stop := context.WithCancel(context.WithoutCancel(ctx))
	d.stop = stop
	go d.watch(watching, watcher)
	return d, nil
}

// Close stops the watch.
func (d *Deployment) Close() { d.stop() }

// Seen are the phases the request was in, in order.
func (d *Deployment) Seen() []Transition {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.seen)
}

// Last is the request as last seen.
func (d *Deployment) Last() *v1.StorageSiteDeployment {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last.DeepCopy()
}

// watch records every version of the request until ctx ends, watching
// again when the API server closes a watch.
func (d *Deployment) watch(ctx context.Context, w client.WithWatch) {
	for ctx.Err() == nil {
		watcher, err := w.Watch(ctx, &v1.StorageSiteDeploymentList{}, client.InNamespace(d.key.Namespace),
			client.MatchingFields{"metadata.name": d.key.Name})
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		for event := range watcher.ResultChan() {
			if request, ok := event.Object.(*v1.StorageSiteDeployment); ok {
				d.observe(request)
			}
		}
		watcher.Stop()
	}
}

// observe records a version of the request, and its phase when it is new.
func (d *Deployment) observe(request *v1.StorageSiteDeployment) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last != nil && d.last.ResourceVersion == request.ResourceVersion {
		return
	}
	d.last = request
	phase := request.Status.Phase
	if phase == "" || (len(d.seen) > 0 && d.seen[len(d.seen)-1].Phase == phase) {
		return
	}
	t := Transition{Phase: phase, After: time.Since(d.started)}
	d.seen = append(d.seen, t)
	d.p.Printf("%s: %s after %.1f s (%s)", d.key.Name, phase, t.After.Seconds(), summary(request))
}

// Until waits until the request reached phase (or a later one); Failed is
// an error with the hub's reason. Besides the watch it reads the request
// every few seconds, should a watch be slow to come back.
func (d *Deployment) Until(ctx context.Context, phase v1.StorageSiteDeploymentPhase, limit time.Duration) error {
	read := time.Now()
	err := poll.Until(ctx, limit, func() (bool, string) {
		if time.Since(read) > 5*time.Second {
			read = time.Now()
			request := &v1.StorageSiteDeployment{}
			if err := d.hub.Get(ctx, d.key, request); err == nil {
				d.observe(request)
			}
		}
		last := d.Last()
		if last == nil {
			return false, "not seen yet"
		}
		observed := last.Status.Phase
		if observed == v1.StorageSiteDeploymentFailed || observed.Rank() >= phase.Rank() {
			return true, ""
		}
		return false, fmt.Sprintf("%s (%s)", observed, summary(last))
	})
	if err != nil {
		return fmt.Errorf("%s did not reach %s: %w", d.key, phase, err)
	}
	if last := d.Last(); last.Status.Phase == v1.StorageSiteDeploymentFailed && phase != v1.StorageSiteDeploymentFailed {
		return fmt.Errorf("%s failed: %s", d.key, last.Status.Reason)
	}
	return nil
}

// Approve flips the request's one-way approval.
func (d *Deployment) Approve(ctx context.Context) error {
	request := &v1.StorageSiteDeployment{}
	if err := d.hub.Get(ctx, d.key, request); err != nil {
		return err
	}
	if request.Spec.Approved {
		return nil
	}
	unchanged := client.MergeFrom(request.DeepCopy())
	request.Spec.Approved = true
	if err := d.hub.Patch(ctx, request, unchanged); err != nil {
		return fmt.Errorf("failed to approve %s: %w", d.key, err)
	}
	d.p.Printf("%s: approved after %.1f s", d.key.Name, time.Since(d.started).Seconds())
	return nil
}

// deployLimit bounds each stretch of a deployment: discovery to the draft,
// approval to Online (the node agent starts once its cluster exists).
const deployLimit = 6 * time.Minute

// DeployStorage runs the hub's deployment flow for one site, as a user of
// the hub would: it submits the request unapproved, waits for the site's
// draft to be projected back (Drafted), approves it, and waits until the
// site's storage cluster is Online. It returns the deployment with every
// phase it saw.
func DeployStorage(ctx context.Context, p *steplog.Log, hub Cluster, request *v1.StorageSiteDeployment) (*Deployment, error) {
	if request.Spec.Approved {
		return nil, errors.New("DeployStorage approves the draft itself, once it is projected: submit the request unapproved")
	}
	d, err := Submit(ctx, p, hub, request)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if err := d.Until(ctx, v1.StorageSiteDeploymentDrafted, deployLimit); err != nil {
		return d, err
	}
	if err := d.Approve(ctx); err != nil {
		return d, err
	}
	return d, d.Until(ctx, v1.StorageSiteDeploymentOnline, deployLimit)
}

// summary is the request's conditions and what it projects, in one line.
func summary(r *v1.StorageSiteDeployment) string {
	parts := []string{conditionsOf(r.Status.Conditions)}
	if r.Status.Draft != nil {
		parts = append(parts, fmt.Sprintf("draft %s: %d node sets", r.Status.Draft.Name, len(r.Status.Draft.NodeSets)))
	}
	if c := r.Status.Cluster; c != nil {
		parts = append(parts, fmt.Sprintf("cluster %s (%s, pool %s, nodes %s), %d ready", c.Name, c.ClusterID, c.Pool,
			strings.Join(c.Nodes, ","), r.Status.ReadyNodeCount))
	}
	return strings.Join(parts, "; ")
}
