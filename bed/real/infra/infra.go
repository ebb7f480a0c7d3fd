package infra

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/baton-dr/baton/internal/poll"
	"github.com/baton-dr/baton/internal/steplog"
)

// Infra brings the bed's clusters up and takes everything the bed made
// down again, printing each phase with the time since it started.
type Infra struct {
	Paths Paths
	// Storage is the sites' storage mode (BATON_REALBED_STORAGE by default).
	Storage StorageMode
	// OCM: the hub deploys HubDeployed's storage through OCM (OCMEnv);
	// false has the chart make both sites' storage clusters.
	OCM bool
	// Retain keeps what a failed bring-up made, for inspection (RetainEnv
	// by default); Up takes it away otherwise.
	Retain bool
	// log receives the progress: the bring-up's and OCM's (ocm.NewProgress).
	log      io.Writer
	progress *steplog.Log
}

// New is the bed's infrastructure under paths, logging to log.
func New(paths Paths, log io.Writer) (*Infra, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the real bed needs root: the private dockerd, loop devices, the host's firewall")
	}
	storage, err := StorageModeFromEnv()
	if err != nil {
		return nil, err
	}
	if err := useDockerd(paths); err != nil {
		return nil, err
	}
	return &Infra{Paths: paths, Storage: storage, OCM: OCMFromEnv(), Retain: RetainFromEnv(), log: log, progress: steplog.New(log, "realbed")}, nil
}

// Printf prints one line of progress with the time since the start.
func (in *Infra) Printf(format string, args ...any) { in.progress.Printf(format, args...) }

// phase runs one phase and prints how long it took, or how it failed.
func (in *Infra) phase(name string, f func() (string, error)) error { return in.progress.Step(name, f) }

// Client is a clientset of the cluster from its kubeconfig.
func (in *Infra) Client(c Cluster) (*kubernetes.Clientset, string, error) {
	config, err := clientcmd.BuildConfigFromFlags("", in.Paths.Kubeconfig(c.Name))
	if err != nil {
		return nil, "", fmt.Errorf("%s: its kubeconfig: %w", c.Name, err)
	}
	config.Timeout = 20 * time.Second
	client, err := kubernetes.NewForConfig(config)
	return client, config.Host, err
}

// readyLimit bounds the wait for a cluster's node and system pods.
const readyLimit = 3 * time.Minute

// ready waits for the cluster: its API server ready (/readyz), then its
// node and its system pods Ready.
func (in *Infra) ready(ctx context.Context, c Cluster) error {
	client, host, err := in.Client(c)
	if err != nil {
		return err
	}
	return waitReady(ctx, client, c.Name, host, readyLimit)
}

// waitReady retries until the cluster is ready or limit passes: its API
// server, which may still be starting, answering /readyz ready, then its
// node and system pods Ready. The error names the cluster, and its API
// server if that never answered ready.
func waitReady(ctx context.Context, client kubernetes.Interface, name, host string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if err := WaitReadyz(ctx, client, host, limit, WaitUnanswered); err != nil {
		return fmt.Errorf("%s cannot be reached: %w", name, err)
	}
	for {
		last := notReady(ctx, client)
		if last == "" {
			return nil
		}
		if poll.Pause(ctx, time.Second) != nil {
			return fmt.Errorf("%s: not ready within %s: %s", name, limit, last)
		}
	}
}

// notReady says what of the cluster is not Ready yet; "" when all is.
func notReady(ctx context.Context, client kubernetes.Interface) string {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var waiting []string
	for _, n := range nodes.Items {
		if !conditionTrue(n.Status.Conditions, corev1.NodeReady) {
			waiting = append(waiting, "node "+n.Name)
		}
	}
	pods, err := client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, p := range pods.Items {
		if !podReady(p) && p.Status.Phase != corev1.PodSucceeded {
			waiting = append(waiting, "pod "+p.Name)
		}
	}
	if len(nodes.Items) == 0 {
		waiting = append(waiting, "no node registered")
	}
	if len(waiting) == 0 {
		return ""
	}
	return strings.Join(waiting, ", ") + " not Ready"
}

func conditionTrue(conditions []corev1.NodeCondition, t corev1.NodeConditionType) bool {
	for _, c := range conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Down takes down everything the bed made, whatever users left in it: it
// asks each site's node agent to close its pool first (best effort), then
// deletes the bed's clusters (only those), its network and firewall rule,
// takes down the DRBD resources and exports the ZFS pools of zfs-drbd mode
// in the host's kernel (kernelStorage), and detaches every loop device its
// node agents attached, volumes and pools, however their paths now show. It goes on past a failure and
// returns every one, naming what it could not release. The private dockerd
// is the caller's (dockerd.sh stop).
func (in *Infra) Down(ctx context.Context) error {
	var errs []error
	dockerd := checkDockerd(ctx) == nil
	if dockerd {
		for _, c := range Sites() {
			if _, err := os.Stat(in.Paths.Kubeconfig(c.Name)); err == nil {
				// Not fatal: the sweep below releases what the agent leaves.
				_ = in.phase("take baton out of "+c.Name, func() (string, error) { return in.undeploy(ctx, c) })
			}
		}
		errs = append(errs, in.phase("clusters", func() (string, error) {
			deleted, err := deleteClusters(ClusterNames(), io.Discard)
			if len(deleted) == 0 {
				return "none of the bed's", err
			}
			return "deleted " + strings.Join(deleted, ", "), err
		}))
		errs = append(errs, in.phase("network", func() (string, error) { return KindNetwork + " removed", removeNetwork(ctx) }))
	} else {
		in.Printf("the private dockerd does not answer: no cluster to delete")
	}
	// zfs-drbd mode's DRBD resources and pools are the host kernel's: they
	// outlive the nodes. Harmless in btrfs mode, which makes neither.
	errs = append(errs, in.phase("host kernel's DRBD and ZFS", newKernelStorage().release))
	errs = append(errs, in.phase("loop devices", func() (string, error) {
		scratch := filepath.Join(in.Paths.Cache, "scan")
		if err := os.MkdirAll(scratch, 0o700); err != nil {
			return "", err
		}
		n := 0
		err := ReleaseDevices(ctx, scratch, SiteNames(), func(format string, args ...any) {
			n++
			in.Printf(format, args...)
		})
		return fmt.Sprintf("%d released, none of the bed's left", n), err
	}))
	removeForwardRule(ctx)
	return errors.Join(errs...)
}

// undeployLimit bounds each wait of taking baton out of a site.
const undeployLimit = 90 * time.Second

// undeploy deletes the proof's namespace, so that the CSI driver deletes
// its volume, then the node agent's DaemonSet, whose pods close their pool
// on SIGTERM (unmounting it, detaching its loop devices). A user's claim
// left in the site keeps its volume's device attached: the sweep after the
// clusters' deletion releases it.
func (in *Infra) undeploy(ctx context.Context, c Cluster) (string, error) {
	client, _, err := in.Client(c)
	if err != nil {
		return "", err
	}
	foreground := metav1.DeletePropagationForeground
	if err := client.CoreV1().Namespaces().Delete(ctx, "baton-proof", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return "", err
	}
	if err := waitGone(ctx, func() (bool, error) {
		_, err := client.CoreV1().Namespaces().Get(ctx, "baton-proof", metav1.GetOptions{})
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	}); err != nil {
		return "", fmt.Errorf("the proof's namespace: %w", err)
	}
	err = client.AppsV1().DaemonSets("baton-system").Delete(ctx, "baton-node", metav1.DeleteOptions{PropagationPolicy: &foreground})
	if err != nil && !apierrors.IsNotFound(err) {
		return "", err
	}
	if err := waitGone(ctx, func() (bool, error) {
		pods, err := client.CoreV1().Pods("baton-system").List(ctx, metav1.ListOptions{LabelSelector: "app=baton-node"})
		return err == nil && len(pods.Items) == 0, err
	}); err != nil {
		return "", fmt.Errorf("the node agent's pods: %w", err)
	}
	return "the node agent closed its pool", nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// waitGone polls gone every second until it holds, within undeployLimit.
func waitGone(ctx context.Context, gone func() (bool, error)) error {
	return poll.Until(ctx, undeployLimit, func() (bool, string) {
		ok, err := gone()
		return ok, fmt.Sprintf("still there (last error: %v)", err)
	})
}
