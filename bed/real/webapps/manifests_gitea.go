package webapps

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// GiteaSpec is one Gitea instance's objects' parameters.
type GiteaSpec struct {
	Name      string // the objects' names
	Placement Placement
	// Repositories and Database are the two volumes' claims, as the workload
	// model has them: the bare repositories, and the state (SQLite's
	// gitea.db, app.ini with its secrets, Gitea's data directory).
	Repositories, Database Claim
	Image                  string // ci/realbed/apps/images.sh's gitea
	// AdminPassword is the administrator's (GiteaAdmin), with which the
	// driver makes its token: letters and digits, 12 or more.
	AdminPassword string
}

// GiteaAdmin is the administrator's login, the owner of the driver's
// repository.
const GiteaAdmin = "baton"

// GiteaObjects builds a Gitea instance: a Secret, the two claims (unless
// Placement.ExistingClaims), the Deployment and its NodePort Service.
func GiteaObjects(s GiteaSpec) (Objects, error) {
	if err := s.Placement.check(s.Name); err != nil {
		return Objects{}, err
	}
	switch {
	case s.Repositories.Name == "" || s.Database.Name == "" || s.Repositories.Name == s.Database.Name:
		return Objects{}, fmt.Errorf("%s: want two distinct claim names, got %q and %q", s.Name, s.Repositories.Name, s.Database.Name)
	case s.Image == "":
		return Objects{}, fmt.Errorf("%s: no Gitea image", s.Name)
	}
	if err := checkPassword(s.Name+" admin password", s.AdminPassword); err != nil {
		return Objects{}, err
	}
	p := s.Placement
	l := labels("gitea", "server", s.Name)
	secretName := s.Name + "-credentials"
	o := Objects{Secrets: []*corev1.Secret{secret(secretName, p, l, map[string]string{"admin-password": s.AdminPassword})}}
	if !p.ExistingClaims {
		o.Claims = append(o.Claims, claim(s.Repositories, p, l), claim(s.Database, p, l))
	}
	grace := int64(30)
	c := corev1.Container{
		Name: "gitea", Image: s.Image, ImagePullPolicy: corev1.PullNever,
		Env: []corev1.EnvVar{
			{Name: "GITEA_ADMIN_USER", Value: GiteaAdmin}, fromSecret("GITEA_ADMIN_PASSWORD", secretName, "admin-password"),
		},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 3000}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "repositories", MountPath: "/data/repositories", SubPath: "repositories"},
			{Name: "state", MountPath: "/data/state", SubPath: "state"},
		},
		// /api/healthz answers 200 once Gitea reaches its database.
		ReadinessProbe:  httpReady(giteaHealth, 3000),
		SecurityContext: rootThatDrops(giteaCapabilities),
		Resources:       resources("100m", "256Mi"),
	}
	o.Deployments = append(o.Deployments, deployment(s.Name, p, l, corev1.PodSpec{
		Containers: []corev1.Container{c}, TerminationGracePeriodSeconds: &grace,
		Volumes: []corev1.Volume{claimVolume("repositories", s.Repositories.Name), claimVolume("state", s.Database.Name)},
	}))
	o.Services = append(o.Services, service(s.Name, p, l, 3000, p.NodePort))
	return o, nil
}
