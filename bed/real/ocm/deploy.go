package ocm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

// RequestNamespace is where the bed puts its StorageSiteDeployments on the
// hub.
const RequestNamespace = "baton-requests"

// Request is the bed's request for a site's storage: a discovery of the
// named nodes with the loop files the site's operator proposes, and a
// btrfs pool of one replica per volume (the bed's kernel has no DRBD or
// ZFS), in a StorageCluster named clusterName. It is not approved: the
// approval follows the review of the draft (DeployStorage).
func Request(name, site, siteNamespace, clusterName string, nodes []string) *v1.StorageSiteDeployment {
	return &v1.StorageSiteDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: RequestNamespace, Name: name},
		Spec: v1.StorageSiteDeploymentSpec{Site: site, SiteNamespace: siteNamespace,
			Discovery: v1.OperatorOpsSpec{NodeNames: nodes, Devices: v1.DeviceFilter{AllowLoopFiles: true}},
			Sizing: &v1.Sizing{ClusterName: clusterName, StorageLayout: v1.StorageLayout{
				Pool: v1.PoolLayout{Name: "baton", Backend: v1.BackendBtrfs}, PlaceCount: 1}}},
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

// Deployment follows one StorageSiteDeployment on the hub.
type Deployment struct {
	hub     client.Client
	key     client.ObjectKey
	started time.Time
	p       *Progress
	// Seen are the phases observed so far, in order.
	Seen []Transition
	// Last is the request as last read.
	Last *v1.StorageSiteDeployment
}

// Submit creates the request on the hub (its namespace too), or follows the
// one there is. Its time counts from now.
func Submit(ctx context.Context, p *Progress, hub Cluster, request *v1.StorageSiteDeployment) (*Deployment, error) {
	c, err := hub.client()
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
	return d, nil
}

// Until polls the request every second, printing each new phase with its
// time, until it reaches phase (or a later one); Failed is an error with
// the hub's reason.
func (d *Deployment) Until(ctx context.Context, phase v1.StorageSiteDeploymentPhase, limit time.Duration) error {
	err := until(ctx, limit, func() (bool, string) {
		request := &v1.StorageSiteDeployment{}
		if err := d.hub.Get(ctx, d.key, request); err != nil {
			return false, err.Error()
		}
		d.Last = request
		observed := request.Status.Phase
		if observed != "" && (len(d.Seen) == 0 || d.Seen[len(d.Seen)-1].Phase != observed) {
			t := Transition{Phase: observed, After: time.Since(d.started)}
			d.Seen = append(d.Seen, t)
			d.p.Printf("%s: %s after %.1f s (%s)", d.key.Name, observed, t.After.Seconds(), summary(request))
		}
		switch {
		case observed == v1.StorageSiteDeploymentFailed:
			return true, ""
		case rank(observed) >= rank(phase):
			return true, ""
		}
		return false, fmt.Sprintf("%s (%s)", observed, summary(request))
	})
	if err != nil {
		return fmt.Errorf("%s did not reach %s: %w", d.key, phase, err)
	}
	if d.Last.Status.Phase == v1.StorageSiteDeploymentFailed && phase != v1.StorageSiteDeploymentFailed {
		return fmt.Errorf("%s failed: %s", d.key, d.Last.Status.Reason)
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
func DeployStorage(ctx context.Context, p *Progress, hub Cluster, request *v1.StorageSiteDeployment) (*Deployment, error) {
	if request.Spec.Approved {
		return nil, errors.New("DeployStorage approves the draft itself, once it is projected: submit the request unapproved")
	}
	d, err := Submit(ctx, p, hub, request)
	if err != nil {
		return nil, err
	}
	if err := d.Until(ctx, v1.StorageSiteDeploymentDrafted, deployLimit); err != nil {
		return d, err
	}
	if err := d.Approve(ctx); err != nil {
		return d, err
	}
	return d, d.Until(ctx, v1.StorageSiteDeploymentOnline, deployLimit)
}

var phaseRank = map[v1.StorageSiteDeploymentPhase]int{
	v1.StorageSiteDeploymentPending: 1, v1.StorageSiteDeploymentDiscovering: 2, v1.StorageSiteDeploymentDrafted: 3,
	v1.StorageSiteDeploymentDeploying: 4, v1.StorageSiteDeploymentOnline: 5,
}

func rank(phase v1.StorageSiteDeploymentPhase) int { return phaseRank[phase] }

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
