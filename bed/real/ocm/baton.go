package ocm

import (
	"fmt"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

// What baton adds to OCM: baton-hub on the hub, and on each site the view
// agent and the roles that let OCM's agents touch baton's objects.

const (
	// HubControllerNamespace is baton-hub's (deploy/hub/hub.yaml).
	HubControllerNamespace = "baton-hub"
	// ViewAgent names the view agent's Deployment, ServiceAccount and roles.
	ViewAgent = "baton-view-agent"
	// workExecution names the role that lets OCM's work agent apply the
	// hub's works in the site's namespace.
	workExecution = "baton:work-agent"
	probePort     = 8081
)

// hubCRDFiles are the CRDs baton-hub needs on the hub: its two requests and
// ManagedClusterView (generated from controllers/hub/view, since
// stolostron's is not served here).
var hubCRDFiles = []string{
	"deploy/crds/storage.baton.dev_storagesitedeployments.yaml",
	"deploy/crds/storage.baton.dev_sitetestfailovers.yaml",
	"controllers/hub/testdata/crds/view.open-cluster-management.io_managedclusterviews.yaml",
}

// batonHubCRDs reads hubCRDFiles from the tree.
func batonHubCRDs() ([]*unstructured.Unstructured, error) {
	var crds []*unstructured.Unstructured
	for _, file := range hubCRDFiles {
		objects, err := readFiles(filepath.Join(repositoryRoot(), file))
		if err != nil {
			return nil, err
		}
		crds = append(crds, objects...)
	}
	return crds, nil
}

// batonHubObjects are baton-hub's identity and generated roles
// (deploy/hub) and its Deployment.
func batonHubObjects(image string) ([]*unstructured.Unstructured, error) {
	objects, err := readFiles(filepath.Join(repositoryRoot(), "deploy", "hub", "hub.yaml"))
	if err != nil {
		return nil, err
	}
	role, err := readFiles(filepath.Join(repositoryRoot(), "deploy", "hub", "rbac", "role.yaml"))
	if err != nil {
		return nil, err
	}
	deployment := deploymentOf(HubControllerNamespace, "baton-hub", "baton-hub", container(image, "baton-hub",
		"--metrics-bind-address=0", fmt.Sprintf("--health-probe-bind-address=:%d", probePort)), nil)
	typed, err := asObjects(deployment)
	if err != nil {
		return nil, err
	}
	return append(append(objects, role...), typed...), nil
}

// viewAgentSiteObjects are the view agent on a site: its ServiceAccount, a
// Role that lets it get the kinds baton's hub views in the site's namespace
// (nothing else: a view of anything else is refused), and its Deployment,
// which reads the hub with the klusterlet's hub kubeconfig.
func viewAgentSiteObjects(image, cluster, siteNamespace string) ([]*unstructured.Unstructured, error) {
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: ViewAgent}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: siteNamespace, Name: ViewAgent}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{v1.GroupVersion.Group}, Verbs: []string{"get"},
		Resources: []string{"clusterdeploymentconfigs", "storageclusters", "storagenodes", "testfailovers"}}}}
	binding := bind(siteNamespace, ViewAgent, "Role", ViewAgent, serviceAccount(AgentNamespace, ViewAgent))
	mount := corev1.VolumeMount{Name: "hub-kubeconfig", MountPath: "/spoke/hub-kubeconfig", ReadOnly: true}
	agent := container(image, "baton-view-agent", "--hub-kubeconfig=/spoke/hub-kubeconfig/kubeconfig",
		"--cluster-name="+cluster, fmt.Sprintf("--health-probe-bind-address=:%d", probePort))
	agent.VolumeMounts = []corev1.VolumeMount{mount}
	deployment := deploymentOf(AgentNamespace, ViewAgent, ViewAgent, agent, []corev1.Volume{{Name: mount.Name,
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: HubKubeconfigSecret}}}})
	return asObjects(account, role, binding, deployment)
}

// viewAgentHubObjects let the cluster's identity on the hub -- the group
// its registration agent's certificate names, which the view agent shares
// -- read the views of its own namespace and answer them. OCM's own roles
// there cover ManifestWorks and leases, not views (stolostron's add-on
// gets a role of its own through the add-on framework).
func viewAgentHubObjects(cluster string) ([]*unstructured.Unstructured, error) {
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "baton:view-agent"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{viewv1beta1.GroupVersion.Group}, Resources: []string{viewv1beta1.Resource}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{viewv1beta1.GroupVersion.Group}, Resources: []string{viewv1beta1.Resource + "/status"}, Verbs: []string{"update", "patch"}},
	}}
	binding := bind(cluster, "baton:view-agent", "Role", "baton:view-agent",
		rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: ClusterGroup(cluster)})
	return asObjects(role, binding)
}

// ClusterGroup is the group OCM's registration puts a cluster's agents in.
func ClusterGroup(cluster string) string { return "system:open-cluster-management:" + cluster }

// workExecutionObjects let OCM's work agent apply what baton's hub sends:
// the discovery run, the sizing and approval onto the draft (server-side
// apply), a drill -- in the site's namespace only. OCM binds the agent to
// the aggregated admin role, which does not cover baton's kinds.
func workExecutionObjects(siteNamespace string) ([]*unstructured.Unstructured, error) {
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: siteNamespace, Name: workExecution}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{v1.GroupVersion.Group}, Resources: []string{"operatorops", "clusterdeploymentconfigs", "testfailovers"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}}
	binding := bind(siteNamespace, workExecution, "Role", workExecution, serviceAccount(AgentNamespace, klusterletName+"-work-sa"))
	return asObjects(role, binding)
}

func serviceAccount(namespace, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}
}

func bind(namespace, name, kind, role string, subject rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role}, Subjects: []rbacv1.Subject{subject}}
}

// container runs one of baton's binaries from baton's image, unprivileged
// (baton's image runs as root by default; these need nothing of it).
func container(image, command string, args ...string) corev1.Container {
	user, no, yes := int64(65532), false, true
	return corev1.Container{Name: command, Image: image, ImagePullPolicy: corev1.PullNever, Command: []string{command}, Args: args,
		Ports: []corev1.ContainerPort{{Name: "probes", ContainerPort: probePort}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz",
			Port: intstr.FromString("probes")}}, PeriodSeconds: 2},
		SecurityContext: &corev1.SecurityContext{RunAsUser: &user, RunAsNonRoot: &yes, ReadOnlyRootFilesystem: &yes,
			AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}}
}

func deploymentOf(namespace, name, account string, c corev1.Container, volumes []corev1.Volume) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	replicas := int32(1)
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{ServiceAccountName: account, Containers: []corev1.Container{c}, Volumes: volumes}}}}
}

// asObjects converts typed objects into what the applier takes, with their
// kinds set (a typed object carries none until it is encoded).
func asObjects(typed ...runtime.Object) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, o := range typed {
		kinds, _, err := scheme.ObjectKinds(o)
		if err != nil || len(kinds) == 0 {
			return nil, fmt.Errorf("no kind for %T: %v", o, err)
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: content}
		u.SetGroupVersionKind(kinds[0])
		unstructured.RemoveNestedField(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		out = append(out, u)
	}
	return out, nil
}
