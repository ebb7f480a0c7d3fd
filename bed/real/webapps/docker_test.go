package webapps

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The tests against the real applications run the images ci/realbed/apps
// builds in the real bed's private dockerd, on a docker network of their
// own, with each volume a directory of the test's. They skip, saying why,
// where there is no such dockerd or no images: `make test` on a machine
// without the real bed stays honest. `make webapps-test` builds the images
// and runs them.

// stock: BATON_WEBAPPS_STOCK=1 runs the applications without the images'
// durability fixes (WordPress's upload fsync, Gitea's sync after a push), to
// show what they buy: the durability and fail-over tests then fail.
var stock = os.Getenv("BATON_WEBAPPS_STOCK") == "1"

// cacheDir is ci/realbed/lib.sh's $cache.
func cacheDir() string {
	if d := os.Getenv("BATON_CACHE"); d != "" {
		return filepath.Join(d, "realbed")
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "baton", "realbed")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "baton", "realbed")
}

// testNetworkSubnet is the test network's: clear of the private dockerd's
// bridge (10.254.253.0/24) and of the ranges docker hands kind's network.
const testNetworkSubnet = "10.254.250.0/24"

// dockerBed is one test's docker network and containers.
type dockerBed struct {
	t       *testing.T
	env     []string
	images  map[string]string
	network string
	dir     string // the volumes' directories
}

// newDockerBed skips the test unless the private dockerd answers and the
// images are built, and makes the test's network, removed at its end.
func newDockerBed(t *testing.T, need ...string) *dockerBed {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the real applications take minutes")
	}
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		host = "unix://" + filepath.Join(cacheDir(), "dockerd", "docker.sock")
	}
	d := &dockerBed{t: t, env: append(os.Environ(), "DOCKER_HOST="+host), network: fmt.Sprintf("baton-webapps-test-%d", os.Getpid())}
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker client: the real applications run in the real bed's private dockerd (make webapps-test)")
	}
	if out, err := d.docker("version", "--format", "{{.Server.Version}}"); err != nil {
		t.Skipf("no dockerd at %s (%v: %s): start it with ci/realbed/dockerd.sh start, or run make webapps-test", host, err, out)
	}
	images, err := readImages(filepath.Join(cacheDir(), "apps", "images.txt"))
	if err != nil {
		t.Skipf("the application images are not built (%v): run ci/realbed/apps/images.sh, or make webapps-test", err)
	}
	for _, name := range need {
		image, ok := images[name]
		if !ok {
			t.Skipf("no %s image in images.txt: run ci/realbed/apps/images.sh", name)
		}
		if _, err := d.docker("image", "inspect", image); err != nil {
			t.Skipf("image %s is not in the dockerd: run ci/realbed/apps/images.sh", image)
		}
	}
	d.images = images
	d.dir = t.TempDir()
	if out, err := d.docker("network", "create", "--subnet", testNetworkSubnet, d.network); err != nil {
		t.Fatalf("creating docker network %s: %v: %s", d.network, err, out)
	}
	t.Cleanup(func() {
		if out, err := d.docker("network", "rm", d.network); err != nil {
			t.Errorf("removing docker network %s: %v: %s", d.network, err, out)
		}
	})
	return d
}

func readImages(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	images := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if name, image, ok := strings.Cut(strings.TrimSpace(s.Text()), "="); ok && name != "" && image != "" {
			images[name] = image
		}
	}
	return images, s.Err()
}

func (d *dockerBed) docker(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Env = d.env
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (d *dockerBed) must(args ...string) string {
	d.t.Helper()
	out, err := d.docker(args...)
	if err != nil {
		d.t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return out
}

// container is how a test runs one of the images.
type container struct {
	name, image string
	env         map[string]string
	volumes     map[string]string   // directory under the bed's dir -> mount point
	caps        []corev1.Capability // the capabilities the manifests give it
}

// run starts c on the test's network and returns its name; it is removed at
// the test's end, its logs printed when the test failed.
func (d *dockerBed) run(c container) string {
	d.t.Helper()
	name := d.network + "-" + c.name
	args := []string{"run", "-d", "--name", name, "--network", d.network, "--network-alias", c.name,
		"--cap-drop", "ALL", "--security-opt", "no-new-privileges"}
	for _, cap := range c.caps {
		args = append(args, "--cap-add", string(cap))
	}
	for k, v := range c.env {
		args = append(args, "-e", k+"="+v)
	}
	for dir, mount := range c.volumes {
		host := dir
		if !filepath.IsAbs(host) {
			host = filepath.Join(d.dir, dir)
		}
		if err := os.MkdirAll(host, 0o755); err != nil {
			d.t.Fatal(err)
		}
		args = append(args, "-v", host+":"+mount)
	}
	d.must(append(args, c.image)...)
	d.t.Cleanup(func() {
		if d.t.Failed() {
			logs, _ := d.docker("logs", "--tail", "40", name)
			d.t.Logf("%s's last log lines:\n%s", c.name, logs)
		}
		if out, err := d.docker("rm", "-f", "-v", name); err != nil {
			d.t.Errorf("removing container %s: %v: %s", name, err, out)
		}
	})
	return name
}

// address is the container's address on the test network.
func (d *dockerBed) address(name string) string {
	d.t.Helper()
	return d.must("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", name)
}

// kill sends SIGKILL to the container's first process -- the database or
// web server itself, which each entrypoint execs -- as a crash would.
func (d *dockerBed) kill(name string) { d.t.Helper(); d.must("kill", "--signal", "KILL", name) }

// start starts a stopped container again, on the same directories.
func (d *dockerBed) start(name string) { d.t.Helper(); d.must("start", name) }

func (d *dockerBed) logs(name string) string {
	d.t.Helper()
	return d.must("logs", name)
}

// exec runs a command in a container.
func (d *dockerBed) exec(name string, args ...string) string {
	d.t.Helper()
	return d.must(append([]string{"exec", name}, args...)...)
}
