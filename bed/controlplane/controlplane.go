// Package controlplane starts real Kubernetes control planes (kube-apiserver and
// etcd, built from source by ci/controlplane/build.sh) for the controller test
// suites and the local bed. It is a thin layer over controller-runtime's envtest:
// what it adds is finding the binaries, and building them when they are missing.
package controlplane

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// assetsVariable names the directory holding kube-apiserver, etcd and kubectl,
// as controller-runtime's envtest reads it.
const assetsVariable = "KUBEBUILDER_ASSETS"

// Assets returns the directory that holds the control-plane binaries. It honours
// KUBEBUILDER_ASSETS; otherwise it runs ci/controlplane/build.sh, which answers in
// well under a second when its cache is warm and builds from source (minutes)
// when it is cold.
func Assets() (string, error) {
	if dir := os.Getenv(assetsVariable); dir != "" {
		return dir, checkAssets(dir)
	}
	script := filepath.Join(repositoryRoot(), "ci", "controlplane", "build.sh")
	cmd := exec.Command("bash", script)
	cmd.Stderr = os.Stderr // progress of a cold build
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("failed to build the control plane with %s: %w", script, err)
	}
	dir := strings.TrimSpace(string(out))
	return dir, checkAssets(dir)
}

func checkAssets(dir string) error {
	var missing []string
	for _, name := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s=%s lacks %s (run ci/controlplane/build.sh)",
			assetsVariable, dir, strings.Join(missing, ", "))
	}
	return nil
}

// repositoryRoot is found from this file's own path, so that tests of any package
// reach the build script whatever their working directory.
func repositoryRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Options configure a control plane.
type Options struct {
	// CRDDirectories are installed before Start returns.
	CRDDirectories []string
	// Address is the IP the API server listens on (and its serving
	// certificate names); empty is 127.0.0.1. The local bed gives its bridge's
	// address, so that processes in the sites' network namespaces reach it.
	Address string
	// Unsynced runs etcd with --unsafe-no-fsync, so that its fsyncs do not
	// queue behind the pools' on a shared disk: for a bed, whose records live
	// only as long as the bed does. A crash of the machine loses them.
	Unsynced bool
}

// ControlPlane is one running kube-apiserver with its etcd.
type ControlPlane struct {
	env    *envtest.Environment
	Config *rest.Config
}

// Start starts a control plane and waits until it serves.
func Start(options Options) (*ControlPlane, error) {
	assets, err := Assets()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     options.CRDDirectories,
		ErrorIfCRDPathMissing: len(options.CRDDirectories) > 0,
	}
	if options.Unsynced {
		env.ControlPlane.Etcd = &envtest.Etcd{}
		env.ControlPlane.Etcd.Configure().Set("unsafe-no-fsync", "true")
	}
	if options.Address != "" {
		// envtest keeps the address only with a port: without one it picks a
		// loopback address and port of its own.
		port, err := freePort(options.Address)
		if err != nil {
			return nil, err
		}
		serving := &env.ControlPlane.GetAPIServer().SecureServing
		serving.Address, serving.Port = options.Address, port
	}
	// envtest discards the API server's output; when it exits before it
	// serves (five tries), its last lines are what tells why.
	said := &lastWords{}
	apiServer := env.ControlPlane.GetAPIServer()
	apiServer.Out, apiServer.Err = said, said
	config, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("failed to start the control plane: %w; kube-apiserver's last output:\n%s", err, said)
	}
	return &ControlPlane{env: env, Config: config}, nil
}

// freePort finds a port nobody listens on at address.
func freePort(address string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(address, "0"))
	if err != nil {
		return "", fmt.Errorf("failed to find a free port on %s: %w", address, err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// Stop stops the API server and etcd and removes etcd's data.
func (c *ControlPlane) Stop() error {
	if c == nil || c.env == nil {
		return errors.New("control plane was not started")
	}
	return c.env.Stop()
}

// lastWords keeps the last lastWordsBytes a process wrote, from both of its
// streams (os/exec copies each on its own goroutine).
type lastWords struct {
	mu  sync.Mutex
	buf []byte
}

const lastWordsBytes = 4 << 10

func (w *lastWords) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if over := len(w.buf) - lastWordsBytes; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	return len(p), nil
}

func (w *lastWords) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}
