package ocm

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Names OCM's operators use for a ClusterManager and a Klusterlet in Default
// mode, kept so that everything OCM's documentation and tools say about a
// hub and its agents holds on the bed.
const (
	// HubNamespace is the cluster-manager's namespace: the registration
	// controller runs there.
	HubNamespace = "open-cluster-management-hub"
	// OperatorNamespace is where the cluster-manager chart puts the
	// bootstrap ServiceAccount sites register with.
	OperatorNamespace = "open-cluster-management"
	// BootstrapServiceAccount is that ServiceAccount.
	BootstrapServiceAccount = "agent-registration-bootstrap"
	// AgentNamespace is the klusterlet's namespace on a site.
	AgentNamespace = "open-cluster-management-agent"
	// AddonNamespace is the add-ons' namespace the klusterlet makes.
	AddonNamespace = "open-cluster-management-agent-addon"
	// BootstrapSecret holds the bootstrap kubeconfig on a site.
	BootstrapSecret = "bootstrap-hub-kubeconfig"
	// HubKubeconfigSecret is where the registration agent keeps the
	// site's own hub kubeconfig once its CSR is approved.
	HubKubeconfigSecret = "hub-kubeconfig-secret"

	clusterManagerName = "cluster-manager"
	klusterletName     = "klusterlet"
	// workStatusSyncInterval is the work agent's status and feedback
	// cadence. The klusterlet operator's default with one replica is 60 s;
	// baton's hub reads the feedback every 15 s, and a bed is small.
	workStatusSyncInterval = "10s"
)

// The manifests the operators apply, as paths under the module's manifests/.
var (
	hubFiles = []string{
		"cluster-manager/cluster-manager-namespace.yaml",
		"cluster-manager/hub/cluster-manager-registration-serviceaccount.yaml",
		"cluster-manager/hub/cluster-manager-registration-clusterrole.yaml",
		"cluster-manager/hub/cluster-manager-registration-clusterrolebinding.yaml",
		"cluster-manager/management/cluster-manager-registration-deployment.yaml",
	}
	// The klusterlet's resources on the managed cluster and on the
	// management cluster (the same cluster in Default mode), as the
	// klusterlet operator lists them, without the deployments.
	klusterletFiles = []string{
		"klusterlet/managed/klusterlet-registration-serviceaccount.yaml",
		"klusterlet/managed/klusterlet-registration-clusterrole.yaml",
		"klusterlet/managed/klusterlet-registration-clusterrole-addon-management.yaml",
		"klusterlet/managed/klusterlet-registration-clusterrolebinding.yaml",
		"klusterlet/managed/klusterlet-registration-clusterrolebinding-addon-management.yaml",
		"klusterlet/managed/klusterlet-work-serviceaccount.yaml",
		"klusterlet/managed/klusterlet-work-clusterrole.yaml",
		"klusterlet/managed/klusterlet-work-clusterrole-execution.yaml",
		"klusterlet/managed/klusterlet-work-clusterrolebinding.yaml",
		"klusterlet/managed/klusterlet-work-clusterrolebinding-aggregate.yaml",
		"klusterlet/managed/klusterlet-work-clusterrolebinding-execution-admin.yaml",
		"klusterlet/management/klusterlet-role-extension-apiserver.yaml",
		"klusterlet/management/klusterlet-registration-serviceaccount.yaml",
		"klusterlet/management/klusterlet-registration-role.yaml",
		"klusterlet/management/klusterlet-registration-rolebinding.yaml",
		"klusterlet/management/klusterlet-registration-rolebinding-extension-apiserver.yaml",
		"klusterlet/management/klusterlet-registration-clusterrole-addon-management.yaml",
		"klusterlet/management/klusterlet-registration-clusterrolebinding-addon-management.yaml",
		"klusterlet/management/klusterlet-work-serviceaccount.yaml",
		"klusterlet/management/klusterlet-work-role.yaml",
		"klusterlet/management/klusterlet-work-rolebinding.yaml",
		"klusterlet/management/klusterlet-work-rolebinding-extension-apiserver.yaml",
	}
	registrationAgentFile = "klusterlet/management/klusterlet-registration-deployment.yaml"
	workAgentFile         = "klusterlet/management/klusterlet-work-deployment.yaml"
	// The bootstrap identity, from OCM's cluster-manager chart (Helm
	// templates; the two values they read are set).
	bootstrapFiles = []string{
		"deploy/cluster-manager/chart/cluster-manager/templates/bootstrap_cluster_role.yaml",
		"deploy/cluster-manager/chart/cluster-manager/templates/bootstrap_sa.yaml",
		"deploy/cluster-manager/chart/cluster-manager/templates/bootstrap_sa_cluster_role_binding.yaml",
	}
)

// newHubConfig is what the cluster-manager operator passes for a
// ClusterManager with default options and image's registration controller.
func newHubConfig(image string) hubConfig {
	return hubConfig{ClusterManagerName: clusterManagerName, ClusterManagerNamespace: HubNamespace,
		OperatorNamespace: OperatorNamespace, RegistrationImage: image, WorkImage: image, Replica: 1,
		RegistrationWebhook: webhook{Port: 9443}, WorkWebhook: webhook{Port: 9443},
		ResourceRequirementResourceType: "Default", Labels: map[string]string{}}
}

// newKlusterletConfig is what the klusterlet operator passes for a
// Klusterlet in Default mode named klusterlet, for cluster.
func newKlusterletConfig(image, cluster string) klusterletConfig {
	return klusterletConfig{KlusterletName: klusterletName, KlusterletNamespace: AgentNamespace, AgentNamespace: AgentNamespace,
		AgentID: agentID(cluster), RegistrationImage: image, WorkImage: image, SingletonImage: image,
		RegistrationServiceAccount: klusterletName + "-registration-sa", WorkServiceAccount: klusterletName + "-work-sa",
		ClusterName: cluster, HubKubeConfigSecret: HubKubeconfigSecret, BootStrapKubeConfigSecret: BootstrapSecret,
		Replica: 1, WorkStatusSyncInterval: workStatusSyncInterval, InstallMode: "Default",
		ResourceRequirementResourceType: "Default", Labels: map[string]string{}}
}

// agentID stands for the Klusterlet's UID, which names the site's
// AppliedManifestWorks: stable per cluster, so a re-install adopts them.
func agentID(cluster string) string {
	sum := sha256.Sum256([]byte("baton-realbed/klusterlet/" + cluster))
	return fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
}

// hubCRDs are OCM's hub CRDs as the module ships them.
func hubCRDs(moduleDir string) ([]*unstructured.Unstructured, error) {
	return readFiles(filepath.Join(moduleDir, "manifests", "cluster-manager", "hub", "*.crd.yaml"))
}

// klusterletCRDs are the CRDs the klusterlet puts on a managed cluster.
func klusterletCRDs(moduleDir string) ([]*unstructured.Unstructured, error) {
	return readFiles(filepath.Join(moduleDir, "manifests", "klusterlet", "managed", "*.crd.yaml"))
}

// hubObjects are the cluster-manager's registration controller and the
// bootstrap identity.
func hubObjects(moduleDir, image string) ([]*unstructured.Unstructured, error) {
	var objects []*unstructured.Unstructured
	for _, file := range hubFiles {
		rendered, err := render(moduleDir, file, newHubConfig(image))
		if err != nil {
			return nil, err
		}
		objects = append(objects, rendered...)
	}
	chart := map[string]any{"Values": map[string]any{"createBootstrapSA": true, "createBootstrapToken": false},
		"Release": map[string]any{"Namespace": OperatorNamespace}}
	for _, file := range bootstrapFiles {
		rendered, err := renderModuleFile(moduleDir, file, chart)
		if err != nil {
			return nil, err
		}
		objects = append(objects, rendered...)
	}
	return objects, nil
}

// klusterletObjects are the klusterlet's roles and service accounts, and
// its two agents' Deployments.
func klusterletObjects(moduleDir, image, cluster string) (roles []*unstructured.Unstructured, registration, work *unstructured.Unstructured, err error) {
	config := newKlusterletConfig(image, cluster)
	for _, file := range klusterletFiles {
		rendered, err := render(moduleDir, file, config)
		if err != nil {
			return nil, nil, nil, err
		}
		roles = append(roles, rendered...)
	}
	one := func(file string) (*unstructured.Unstructured, error) {
		rendered, err := render(moduleDir, file, config)
		if err != nil {
			return nil, err
		}
		if len(rendered) != 1 || rendered[0].GetKind() != "Deployment" {
			return nil, fmt.Errorf("OCM's manifest %s rendered %d objects, not one Deployment", file, len(rendered))
		}
		return rendered[0], nil
	}
	if registration, err = one(registrationAgentFile); err != nil {
		return nil, nil, nil, err
	}
	if work, err = one(workAgentFile); err != nil {
		return nil, nil, nil, err
	}
	return roles, registration, work, nil
}
