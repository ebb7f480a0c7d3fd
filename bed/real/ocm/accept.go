package ocm

import (
	"context"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/internal/poll"
)

// clusterNameLabel is the label OCM's registration agent puts on its CSRs.
const clusterNameLabel = "open-cluster-management.io/cluster-name"

// acceptLimit bounds each wait of accepting a site: its ManagedCluster and
// CSR, which its registration agent makes once it reaches the hub.
const acceptLimit = 3 * time.Minute

// bootstrapUser is who a first CSR of a site comes from.
func bootstrapUser() string {
	return "system:serviceaccount:" + OperatorNamespace + ":" + BootstrapServiceAccount
}

// Accept does on the hub what `clusteradm accept --clusters NAME` does: it
// waits for the cluster's ManagedCluster and its registration agent's CSR,
// approves the CSRs of that cluster that came through the bootstrap
// identity (a renewal is the hub controller's to approve; a CSR from anyone
// else is left alone), and sets hubAcceptsClient. The registration
// controller then makes the cluster's namespace and its agents' roles.
func Accept(ctx context.Context, hub Cluster, name string) (string, error) {
	c, err := hub.client()
	if err != nil {
		return "", err
	}
	clientset, err := kubernetes.NewForConfig(hub.Config)
	if err != nil {
		return "", err
	}
	cluster := &clusterv1.ManagedCluster{}
	if err := poll.Until(ctx, acceptLimit, func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cluster); err != nil {
			return false, "the ManagedCluster: " + err.Error() + " (its registration agent has not reached the hub)"
		}
		return true, ""
	}); err != nil {
		return "", err
	}
	var approved []string
	if err := poll.Until(ctx, acceptLimit, func() (bool, string) {
		names, err := approveCSRs(ctx, clientset, name)
		approved = append(approved, names...)
		if err != nil {
			return false, err.Error()
		}
		if len(approved) == 0 {
			return false, "no CSR of " + name + " from " + bootstrapUser() + " to approve"
		}
		return true, ""
	}); err != nil {
		return "", err
	}
	if !cluster.Spec.HubAcceptsClient {
		accepted := client.MergeFrom(cluster.DeepCopy())
		cluster.Spec.HubAcceptsClient = true
		if err := c.Patch(ctx, cluster, accepted); err != nil {
			return "", fmt.Errorf("failed to accept the ManagedCluster %s: %w", name, err)
		}
	}
	return fmt.Sprintf("CSR %s approved, hubAcceptsClient true", strings.Join(approved, ", ")), nil
}

// approveCSRs approves the cluster's pending CSRs that its bootstrap
// identity made, and names them; one approved before counts as approved.
func approveCSRs(ctx context.Context, clientset kubernetes.Interface, name string) ([]string, error) {
	list, err := clientset.CertificatesV1().CertificateSigningRequests().List(ctx,
		metav1.ListOptions{LabelSelector: clusterNameLabel + "=" + name})
	if err != nil {
		return nil, fmt.Errorf("failed to list the CSRs of %s: %w", name, err)
	}
	var approved []string
	for i := range list.Items {
		csr := &list.Items[i]
		if csr.Spec.Username != bootstrapUser() || decided(csr, certificatesv1.CertificateDenied) {
			continue
		}
		if decided(csr, certificatesv1.CertificateApproved) {
			approved = append(approved, csr.Name)
			continue
		}
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "AcceptedByTheRealBed",
			Message: "the real bed accepts its own site " + name, LastUpdateTime: metav1.Now()})
		if _, err := clientset.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
			return approved, fmt.Errorf("failed to approve the CSR %s: %w", csr.Name, err)
		}
		approved = append(approved, csr.Name)
	}
	return approved, nil
}

func decided(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, condition := range csr.Status.Conditions {
		if condition.Type == t && condition.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// waitJoined waits until the hub says the cluster is accepted, joined (its
// agent holds its certificate) and available (its lease is renewed).
func waitJoined(ctx context.Context, hub client.Client, name string) (string, error) {
	want := []string{clusterv1.ManagedClusterConditionHubAccepted, clusterv1.ManagedClusterConditionJoined,
		clusterv1.ManagedClusterConditionAvailable}
	err := poll.Until(ctx, acceptLimit, func() (bool, string) {
		cluster := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: name}, cluster); err != nil {
			return false, err.Error()
		}
		for _, condition := range want {
			if !meta.IsStatusConditionTrue(cluster.Status.Conditions, condition) {
				return false, fmt.Sprintf("%s is not %s: %s", name, condition, conditionsOf(cluster.Status.Conditions))
			}
		}
		return true, ""
	})
	return strings.Join(want, ", "), err
}

func conditionsOf(conditions []metav1.Condition) string {
	var out []string
	for _, c := range conditions {
		out = append(out, fmt.Sprintf("%s=%s (%s)", c.Type, c.Status, c.Reason))
	}
	if len(out) == 0 {
		return "no conditions"
	}
	return strings.Join(out, ", ")
}
