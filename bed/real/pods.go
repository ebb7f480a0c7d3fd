package real

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/bed/real/infra"
	"github.com/baton-dr/baton/internal/poll"
	"github.com/baton-dr/baton/workload"
)

// claimLimit bounds a claim's binding and a pod's start.
const claimLimit = 3 * time.Minute

func (b *Bed) ensureNamespace(ctx context.Context, s *site) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.namespace(), Labels: map[string]string{"baton.dev/scenario-run": b.run}}}
	_, err := s.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// volumeMode is how the application's pods hold its claims: mounted (an
// application's own), or raw block devices (a workload model's).
func (a *app) volumeMode() *corev1.PersistentVolumeMode {
	mode := corev1.PersistentVolumeBlock
	if a.web != nil {
		mode = corev1.PersistentVolumeFilesystem
	}
	return &mode
}

// claim makes a claim of the StorageClass baton for the volume, as the
// application's chart would, and returns its persistent volume's name and
// CSI handle once external-provisioner bound it.
func (b *Bed) claim(ctx context.Context, s *site, a *app, v workload.VolumeSpec) (pv, handle string, err error) {
	name, class := v.Name, "baton"
	mib := (v.SizeBytes + 1<<20 - 1) >> 20
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.namespace()},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeMode: a.volumeMode(), StorageClassName: &class, Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(int64(mib<<20), resource.BinarySI)}}}}
	if _, err := s.client.CoreV1().PersistentVolumeClaims(b.namespace()).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		return "", "", fmt.Errorf("%s: claim %s: %w", s.Name, name, err)
	}
	err = poll.Until(ctx, claimLimit, func() (bool, string) {
		got, err := s.client.CoreV1().PersistentVolumeClaims(b.namespace()).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if got.Status.Phase != corev1.ClaimBound {
			return false, "the claim is " + string(got.Status.Phase)
		}
		volume, err := s.client.CoreV1().PersistentVolumes().Get(ctx, got.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		pv, handle = volume.Name, volume.Spec.CSI.VolumeHandle
		return true, ""
	})
	if err != nil {
		return "", "", fmt.Errorf("%s: claim %s: %w", s.Name, name, err)
	}
	return pv, handle, nil
}

// restoreClaim makes, on the site the application moves to, the persistent
// volume and claim Ramen restores there: the volume's handle unchanged (the
// chain's root, kept for ever), bound to the claim by name, retained when
// the claim goes (the data is the chain's, not this claim's). It returns
// the persistent volume's name.
func (b *Bed) restoreClaim(ctx context.Context, s *site, a *app, v apps.Volume) (string, error) {
	name := fmt.Sprintf("%s-%s-%s", b.namespace(), s.Site, v.Name)
	if _, err := s.client.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{}); err == nil {
		return name, nil
	}
	class := "baton"
	mib := (v.SizeBytes + 1<<20 - 1) >> 20
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"baton.dev/scenario-run": b.run}},
		Spec: corev1.PersistentVolumeSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeMode: a.volumeMode(), StorageClassName: class,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(int64(mib<<20), resource.BinarySI)},
			ClaimRef:                      &corev1.ObjectReference{Namespace: b.namespace(), Name: v.Name},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: "csi.baton-dr.io", VolumeHandle: v.Handle}}}}
	if _, err := s.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("%s: restore the volume of %s: %w", s.Name, v.Name, err)
	}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: v.Name, Namespace: b.namespace()},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: pv.Spec.AccessModes, VolumeMode: a.volumeMode(), StorageClassName: &class,
			VolumeName: name, Resources: corev1.VolumeResourceRequirements{Requests: pv.Spec.Capacity}}}
	if _, err := s.client.CoreV1().PersistentVolumeClaims(b.namespace()).Create(ctx, claim, metav1.CreateOptions{}); err != nil &&
		!apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("%s: restore the claim of %s: %w", s.Name, v.Name, err)
	}
	return name, nil
}

// startPod starts the application's pod on the site, holding every claim as
// a raw block device, and returns its UID once it runs -- kubelet has
// staged and published every volume.
func (b *Bed) startPod(ctx context.Context, s *site, name string, volumes []apps.Volume) (string, error) {
	image, err := batonImage(ctx, s)
	if err != nil {
		return "", err
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.namespace(), Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: new(int64), Containers: []corev1.Container{{
			Name: "app", Image: image, ImagePullPolicy: corev1.PullNever, Command: []string{"sleep", "infinity"}}}}}
	for _, v := range volumes {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: v.Name}}})
		pod.Spec.Containers[0].VolumeDevices = append(pod.Spec.Containers[0].VolumeDevices,
			corev1.VolumeDevice{Name: v.Name, DevicePath: "/dev/baton-" + v.Name})
	}
	if _, err := s.client.CoreV1().Pods(b.namespace()).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("%s: start %s's pod: %w", s.Name, name, err)
	}
	var uid string
	err = poll.Until(ctx, b.options.ActionLimit, func() (bool, string) {
		got, err := s.client.CoreV1().Pods(b.namespace()).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		uid = string(got.UID)
		return got.Status.Phase == corev1.PodRunning, podWaiting(got)
	})
	if err != nil {
		return "", fmt.Errorf("%s: %s's pod: %w", s.Name, name, err)
	}
	return uid, nil
}

// podWaiting says why a pod does not run yet, from its status and events.
func podWaiting(p *corev1.Pod) string {
	for _, c := range p.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil {
			return fmt.Sprintf("%s: %s %s", p.Status.Phase, w.Reason, w.Message)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			return fmt.Sprintf("%s: %s", p.Status.Phase, c.Message)
		}
	}
	return string(p.Status.Phase)
}

// batonImage is the image baton runs in the site: the pods use it too (no
// registry here; it has sleep).
func batonImage(ctx context.Context, s *site) (string, error) {
	d, err := s.client.AppsV1().Deployments("baton-system").Get(ctx, "baton-controller", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return d.Spec.Template.Spec.Containers[0].Image, nil
}

// openDevices opens, from the host, the block devices kubelet published
// into the pod: the CSI node plugin bind-mounted each volume's device on
// its publish path, which the root of the node container the pod runs on
// shows.
func (b *Bed) openDevices(s *site, a *app, volumes []apps.Volume, podUID string) (workload.Devices, error) {
	ctx, cancel := context.WithTimeout(context.Background(), claimLimit)
	defer cancel()
	pid, err := b.podNodePID(ctx, s, a)
	if err != nil {
		return nil, err
	}
	devices := workload.Devices{}
	for _, v := range volumes {
		path := filepath.Join(fmt.Sprintf("/proc/%d/root", pid), "var/lib/kubelet/plugins/kubernetes.io/csi/volumeDevices/publish",
			a.pv[v.Name][s.Site], podUID)
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			apps.CloseDevices(devices)
			return nil, fmt.Errorf("%s: open %s's published device: %w", s.Name, v.Name, err)
		}
		devices[v.Name] = blockDevice{f}
	}
	return devices, nil
}

// podNodePID is the host PID of the init process of the node container
// the application's pod runs on (the control plane's, which the site
// keeps, on a one-node site).
func (b *Bed) podNodePID(ctx context.Context, s *site, a *app) (int, error) {
	node, err := b.appPodNode(ctx, s, a)
	if err != nil {
		return 0, err
	}
	if node == s.Node() {
		return s.nodePID, nil
	}
	_, pid, err := infra.ContainerOnNetwork(ctx, s.Cluster, node)
	return pid, err
}

// appPodNode is the node the site's scheduler put the application's pods
// on: its model's pod (app=NAME, startPod's), or its own
// (app.kubernetes.io/instance=NAME, the application's charts').
func (b *Bed) appPodNode(ctx context.Context, s *site, a *app) (string, error) {
	selector := "app=" + a.name
	if a.web != nil {
		selector = "app.kubernetes.io/instance=" + a.name
	}
	pods, err := s.client.CoreV1().Pods(b.namespace()).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return "", fmt.Errorf("%s: %s's pods: %w", s.Name, a.name, err)
	}
	node, err := podsNode(pods.Items)
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w", s.Name, a.name, err)
	}
	return node, nil
}

// podsNode is the one node the pods are scheduled on; pods on none yet, or
// on several nodes, are an error (an application's pods share its volumes'
// node here).
func podsNode(pods []corev1.Pod) (string, error) {
	var nodes []string
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Spec.NodeName != "" && !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	slices.Sort(nodes)
	switch len(nodes) {
	case 0:
		return "", fmt.Errorf("none of its %d pods is scheduled on a node", len(pods))
	case 1:
		return nodes[0], nil
	}
	return "", fmt.Errorf("its pods run on %d nodes (%s)", len(nodes), strings.Join(nodes, ", "))
}

// deletePod deletes the application's pod and waits until it is gone:
// kubelet has unpublished and unstaged its volumes.
func (b *Bed) deletePod(ctx context.Context, s *site, name string) error {
	err := s.client.CoreV1().Pods(b.namespace()).Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: delete %s's pod: %w", s.Name, name, err)
	}
	return poll.Until(ctx, b.options.ActionLimit, func() (bool, string) {
		_, err := s.client.CoreV1().Pods(b.namespace()).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("%s's pod is still there (%v)", name, err)
	})
}

// deleteNamespace deletes the run's namespace in the site, and the
// persistent volumes the bed retained or restored there (by the run's
// label: the driver is not asked to delete their data, which is the
// chain's). It does not wait for them to go: the next run's applications
// take NodePorts this one's Services do not hold (freeNodePort).
func (b *Bed) deleteNamespace(s *site) error {
	ctx, cancel := context.WithTimeout(context.Background(), b.options.ActionLimit)
	defer cancel()
	var errs []error
	if err := s.client.CoreV1().Namespaces().Delete(ctx, b.namespace(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	err := s.client.CoreV1().PersistentVolumes().DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: "baton.dev/scenario-run=" + b.run})
	return errors.Join(append(errs, err)...)
}

// retain sets the persistent volume's reclaim policy to Retain and labels
// it with the run, so that deleting its claim never asks the driver to
// delete a replicated chain (which it refuses: external-provisioner would
// retry for ever) and the run's end deletes the object by its label.
func (b *Bed) retain(ctx context.Context, s *site, pv string) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{"baton.dev/scenario-run":%q}},"spec":{"persistentVolumeReclaimPolicy":"Retain"}}`, b.run)
	if _, err := s.client.CoreV1().PersistentVolumes().Patch(ctx, pv, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("%s: retain the persistent volume %s: %w", s.Name, pv, err)
	}
	return nil
}

// blockDevice is a published block device as the application opens it.
type blockDevice struct{ f *os.File }

func (d blockDevice) ReadAt(p []byte, off int64) (int, error)  { return d.f.ReadAt(p, off) }
func (d blockDevice) WriteAt(p []byte, off int64) (int, error) { return d.f.WriteAt(p, off) }
func (d blockDevice) Sync() error                              { return d.f.Sync() }
func (d blockDevice) Close() error                             { return d.f.Close() }
