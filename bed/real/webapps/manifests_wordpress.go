package webapps

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// WordPressSpec is one WordPress instance's objects' parameters.
type WordPressSpec struct {
	Name      string // the objects' names: NAME (web) and NAME-db (MariaDB)
	Placement Placement
	// Database and Uploads are the two volumes' claims: MariaDB's datadir and
	// wp-content/uploads.
	Database, Uploads Claim
	// MariaDBImage and WordPressImage are ci/realbed/apps/images.sh's.
	MariaDBImage, WordPressImage string
	// DatabasePassword, AdminPassword and AppPassword: letters and digits,
	// 12 or more (Password makes them). The driver authenticates as admin
	// with AppPassword.
	DatabasePassword, AdminPassword, AppPassword string
}

// WordPressAdmin is the administrator's login, the user of the driver's
// application password.
const WordPressAdmin = "admin"

func (s WordPressSpec) check() error {
	if err := s.Placement.check(s.Name); err != nil {
		return err
	}
	switch {
	case s.Database.Name == "" || s.Uploads.Name == "" || s.Database.Name == s.Uploads.Name:
		return fmt.Errorf("%s: want two distinct claim names, got %q and %q", s.Name, s.Database.Name, s.Uploads.Name)
	case s.MariaDBImage == "" || s.WordPressImage == "":
		return fmt.Errorf("%s: no MariaDB or WordPress image", s.Name)
	}
	for what, p := range map[string]string{"database password": s.DatabasePassword, "admin password": s.AdminPassword, "application password": s.AppPassword} {
		if err := checkPassword(s.Name+" "+what, p); err != nil {
			return err
		}
	}
	return nil
}

// WordPressObjects builds a WordPress instance: a Secret, the two claims
// (unless Placement.ExistingClaims), MariaDB's Deployment and ClusterIP
// Service (NAME-db), WordPress's Deployment and NodePort Service (NAME).
//
// MariaDB runs in its own pod: each volume belongs to the one server that
// writes it, the database recovers (InnoDB's redo log, when its datadir is a
// crash-consistent copy after an unplanned fail-over) whether or not the web
// pod is up, and the web pod waits for it as it would for any database. The
// datadir is the claim's subdirectory mysql (subPath), so the volume's
// lost+found is not taken for a database.
func WordPressObjects(s WordPressSpec) (Objects, error) {
	if err := s.check(); err != nil {
		return Objects{}, err
	}
	p := s.Placement
	dbName, secretName := s.Name+"-db", s.Name+"-credentials"
	dbLabels, webLabels := labels("mariadb", "database", s.Name), labels("wordpress", "web", s.Name)
	o := Objects{Secrets: []*corev1.Secret{secret(secretName, p, webLabels, map[string]string{
		"database-password": s.DatabasePassword, "admin-password": s.AdminPassword, "application-password": s.AppPassword,
	})}}
	if !p.ExistingClaims {
		o.Claims = append(o.Claims, claim(s.Database, p, dbLabels), claim(s.Uploads, p, webLabels))
	}
	grace := int64(60) // a clean shutdown flushes InnoDB; a planned relocate waits for it
	db := corev1.Container{
		Name: "mariadb", Image: s.MariaDBImage, ImagePullPolicy: corev1.PullNever,
		Env: []corev1.EnvVar{
			{Name: "MARIADB_DATABASE", Value: "wordpress"}, {Name: "MARIADB_USER", Value: "wordpress"},
			fromSecret("MARIADB_PASSWORD", secretName, "database-password"),
		},
		Ports:        []corev1.ContainerPort{{Name: "mysql", ContainerPort: 3306}},
		VolumeMounts: []corev1.VolumeMount{{Name: "datadir", MountPath: "/var/lib/mysql", SubPath: "mysql"}},
		// Ready once mysqld answers, which it does only after crash recovery.
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
			Command: []string{"mariadb-admin", "--protocol=socket", "--user=root", "ping"},
		}}, PeriodSeconds: 2, TimeoutSeconds: 5},
		SecurityContext: rootThatDrops(mariaDBCapabilities),
		Resources:       resources("100m", "256Mi"),
	}
	o.Deployments = append(o.Deployments, deployment(dbName, p, dbLabels, corev1.PodSpec{
		Containers: []corev1.Container{db}, TerminationGracePeriodSeconds: &grace,
		Volumes: []corev1.Volume{claimVolume("datadir", s.Database.Name)},
	}))
	web := corev1.Container{
		Name: "wordpress", Image: s.WordPressImage, ImagePullPolicy: corev1.PullNever,
		Env: []corev1.EnvVar{
			{Name: "WORDPRESS_DB_HOST", Value: dbName + ":3306"}, {Name: "WORDPRESS_DB_NAME", Value: "wordpress"},
			{Name: "WORDPRESS_DB_USER", Value: "wordpress"}, fromSecret("WORDPRESS_DB_PASSWORD", secretName, "database-password"),
			{Name: "WORDPRESS_ADMIN_USER", Value: WordPressAdmin}, fromSecret("WORDPRESS_ADMIN_PASSWORD", secretName, "admin-password"),
			fromSecret("WORDPRESS_APP_PASSWORD", secretName, "application-password"),
		},
		Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
		VolumeMounts: []corev1.VolumeMount{{Name: "uploads", MountPath: "/var/lib/wordpress/wp-content/uploads"}},
		// /wp-json/ answers 200 only once WordPress reaches its database.
		ReadinessProbe:  httpReady(wordPressHealth, 80),
		SecurityContext: rootThatDrops(webCapabilities),
		Resources:       resources("100m", "256Mi"),
	}
	o.Deployments = append(o.Deployments, deployment(s.Name, p, webLabels, corev1.PodSpec{
		Containers: []corev1.Container{web},
		Volumes:    []corev1.Volume{claimVolume("uploads", s.Uploads.Name)},
	}))
	o.Services = append(o.Services, service(dbName, p, dbLabels, 3306, 0), service(s.Name, p, webLabels, 80, p.NodePort))
	return o, nil
}
