package infra

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// eachSite runs f for both sites in parallel and joins the errors.
func (in *Infra) eachSite(f func(c Cluster) error) error { return in.each(Sites(), f) }

// each runs f for every one of clusters in parallel and joins the errors.
func (in *Infra) each(clusters []Cluster, f func(c Cluster) error) error {
	errs := make([]error, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(c)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// restartLimit bounds the wait for the CSI driver's new pods.
const restartLimit = 3 * time.Minute

// restartCSI deletes the pods that read the CSI secret at their start --
// the CSI controller and the node DaemonSet's (the node agent, the node
// plugin, the registrar) -- and waits until their successors are Ready:
// the controller's, and the DaemonSet's on every storage node the mode
// places.
func (in *Infra) restartCSI(ctx context.Context, c Cluster) error {
	client, _, err := in.Client(c)
	if err != nil {
		return err
	}
	var old []string
	for _, app := range []string{"baton-csi-controller", "baton-node"} {
		pods, err := client.CoreV1().Pods("baton-system").List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			old = append(old, p.Name)
			if err := client.CoreV1().Pods("baton-system").Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
				return err
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, restartLimit)
	defer cancel()
	for {
		waiting, err := csiNotReady(ctx, client, old, len(in.Storage.StorageNodes(c)))
		if err == nil && waiting == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready within %s: %s %v", restartLimit, waiting, err)
		case <-time.After(time.Second):
		}
	}
}

// csiNotReady says which of the CSI driver's pods are not Ready yet, none
// of them one of old: the controller's one, and nodePods of the node
// DaemonSet's (one a storage node).
func csiNotReady(ctx context.Context, client kubernetes.Interface, old []string, nodePods int) (string, error) {
	var waiting []string
	for _, d := range []struct {
		app  string
		want int
	}{{"baton-csi-controller", 1}, {"baton-node", nodePods}} {
		pods, err := client.CoreV1().Pods("baton-system").List(ctx, metav1.ListOptions{LabelSelector: "app=" + d.app})
		if err != nil {
			return "", err
		}
		ready := 0
		for _, p := range pods.Items {
			if slices.Contains(old, p.Name) {
				waiting = append(waiting, p.Name+" still there")
				continue
			}
			if podReady(p) {
				ready++
			}
		}
		if ready < d.want {
			waiting = append(waiting, fmt.Sprintf("%s has %d Ready pods of %d", d.app, ready, d.want))
		}
	}
	return strings.Join(waiting, ", "), nil
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
