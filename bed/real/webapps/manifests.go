package webapps

import (
	"fmt"
	"math/rand/v2"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Objects are the Kubernetes objects that run one application, typed, in
// the order to create them.
type Objects struct {
	Secrets     []*corev1.Secret
	Claims      []*corev1.PersistentVolumeClaim
	Deployments []*appsv1.Deployment
	Services    []*corev1.Service
}

// All lists every object, secrets and claims first.
func (o Objects) All() []ctrlclient.Object {
	var all []ctrlclient.Object
	for _, s := range o.Secrets {
		all = append(all, s)
	}
	for _, c := range o.Claims {
		all = append(all, c)
	}
	for _, d := range o.Deployments {
		all = append(all, d)
	}
	for _, s := range o.Services {
		all = append(all, s)
	}
	return all
}

// Placed returns a deep copy of the objects in another namespace, the
// NodePort Services on nodePort: the same application -- its Secrets'
// passwords, which the copied database holds, included -- started beside
// the original, as a drill starts it on its bubbles' claims (they carry the
// original claims' names).
func (o Objects) Placed(namespace string, nodePort int32) Objects {
	var out Objects
	for _, s := range o.Secrets {
		s = s.DeepCopy()
		s.Namespace = namespace
		out.Secrets = append(out.Secrets, s)
	}
	for _, c := range o.Claims {
		c = c.DeepCopy()
		c.Namespace = namespace
		out.Claims = append(out.Claims, c)
	}
	for _, d := range o.Deployments {
		d = d.DeepCopy()
		d.Namespace = namespace
		out.Deployments = append(out.Deployments, d)
	}
	for _, s := range o.Services {
		s = s.DeepCopy()
		s.Namespace = namespace
		for i := range s.Spec.Ports {
			if s.Spec.Ports[i].NodePort != 0 {
				s.Spec.Ports[i].NodePort = nodePort
			}
		}
		out.Services = append(out.Services, s)
	}
	return out
}

// Claim names one volume of an application: the PersistentVolumeClaim the
// pod mounts, and -- on the site a fail-over or relocate moves it to -- the
// PersistentVolume holding the replica the claim must bind to (empty: the
// StorageClass provisions a new volume).
type Claim struct {
	Name   string
	Volume string
	Size   resource.Quantity // zero: 1 GiB
}

// Placement is where an application's objects go and how they are reached.
type Placement struct {
	Namespace    string
	StorageClass string
	// NodePort is the port of the application's Service on the site's nodes,
	// how the driver reaches it from outside the cluster (30000-32767).
	NodePort int32
	// ExistingClaims: the claims exist already (the bed made them, bound to
	// the replicas); no PersistentVolumeClaim objects are built.
	ExistingClaims bool
}

// Password returns a random password of 24 letters and digits, the shape
// WordPress's application passwords take and every entrypoint accepts.
func Password(rng *rand.Rand) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 24)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

func checkPassword(what, p string) error {
	if len(p) < 12 {
		return fmt.Errorf("%s: at least 12 characters", what)
	}
	for _, c := range p {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return fmt.Errorf("%s: only letters and digits", what)
		}
	}
	return nil
}

func (p Placement) check(name string) error {
	switch {
	case checkName(name) != nil:
		return checkName(name)
	case p.Namespace == "":
		return fmt.Errorf("%s: no namespace", name)
	case p.StorageClass == "" && !p.ExistingClaims:
		return fmt.Errorf("%s: no StorageClass for its claims", name)
	case p.NodePort < 30000 || p.NodePort > 32767:
		return fmt.Errorf("%s: NodePort %d outside 30000-32767", name, p.NodePort)
	}
	return nil
}

func labels(app, component, instance string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       app,
		"app.kubernetes.io/component":  component,
		"app.kubernetes.io/instance":   instance,
		"app.kubernetes.io/managed-by": "baton-realbed",
	}
}

func meta(name, namespace string, l map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: l}
}

func claim(c Claim, p Placement, l map[string]string) *corev1.PersistentVolumeClaim {
	size := c.Size
	if size.IsZero() {
		size = resource.MustParse("1Gi")
	}
	storageClass := p.StorageClass
	return &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: meta(c.Name, p.Namespace, l),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: &storageClass,
			VolumeName:       c.Volume,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
}

func secret(name string, p Placement, l map[string]string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(name, p.Namespace, l),
		Type:       corev1.SecretTypeOpaque,
		StringData: data,
	}
}

func fromSecret(env, secretName, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: env, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secretName}, Key: key,
	}}}
}

// deployment is one pod, never two: strategy Recreate, so the old pod is gone
// before the new one mounts the volumes (they are ReadWriteOnce, and two
// database servers on one datadir corrupt it).
func deployment(name string, p Placement, l map[string]string, pod corev1.PodSpec) *appsv1.Deployment {
	one := int32(1)
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(name, p.Namespace, l),
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: pod},
		},
	}
}

func service(name string, p Placement, l map[string]string, port int32, nodePort int32) *corev1.Service {
	s := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(name, p.Namespace, l),
		Spec: corev1.ServiceSpec{
			Selector: l,
			Ports:    []corev1.ServicePort{{Name: "app", Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}},
		},
	}
	if nodePort != 0 {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = nodePort
	}
	return s
}

func claimVolume(name, claimName string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName},
	}}
}

// The capabilities each container keeps. Every entrypoint starts as root
// to chown its volumes (a new volume's root is root's) and then runs the
// server as its own user (SETUID, SETGID); apache2 binds port 80 and signals
// its www-data workers.
var (
	baseCapabilities    = []corev1.Capability{"CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID"}
	mariaDBCapabilities = baseCapabilities
	webCapabilities     = append(append([]corev1.Capability(nil), baseCapabilities...), "NET_BIND_SERVICE", "KILL")
	giteaCapabilities   = baseCapabilities
)

// rootThatDrops is a container's security context: root, no privilege
// escalation, every capability dropped but caps.
func rootThatDrops(caps []corev1.Capability) *corev1.SecurityContext {
	no := false
	zero := int64(0)
	return &corev1.SecurityContext{
		RunAsUser:                &zero,
		AllowPrivilegeEscalation: &no,
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: caps},
	}
}

func resources(cpu, memory string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
	}
}

// httpReady is a readiness probe asking path on port every 2 s.
func httpReady(path string, port int32) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
		Path: path, Port: intstr.FromInt32(port),
	}}, PeriodSeconds: 2, TimeoutSeconds: 10}
}
