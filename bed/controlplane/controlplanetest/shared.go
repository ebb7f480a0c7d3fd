package controlplanetest

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/bed/controlplane"
	"github.com/baton-dr/baton/internal/command"
)

// Shared is one control plane that a package's tests share: starting one
// costs seconds, and each test works in its own namespace. It starts on
// first use; the package's TestMain runs the tests through Main, which stops
// it.
type Shared struct {
	// CRDs lists the CRD manifests (files or directories) to install.
	CRDs func() ([]string, error)
	// Kinds add the kinds that Client knows beside client-go's own.
	Kinds []func(*runtime.Scheme) error

	once sync.Once
	cp   *controlplane.ControlPlane
	err  error

	clientOnce sync.Once
	client     client.Client
	clientErr  error
}

// Config is an admin config of the shared control plane, which it starts on
// first use. A test that needs it is skipped under -short.
func (s *Shared) Config(t testing.TB) *rest.Config {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real kube-apiserver and etcd; skipped under -short")
	}
	s.once.Do(func() {
		crds, err := s.CRDs()
		if err != nil {
			s.err = err
			return
		}
		s.cp, s.err = controlplane.Start(controlplane.Options{CRDDirectories: crds})
	})
	if s.err != nil {
		t.Fatalf("control plane: %v", s.err)
	}
	return rest.CopyConfig(s.cp.Config)
}

// Client is the one admin client of the shared control plane, made on first
// use, that knows client-go's kinds and Kinds. A test that needs it is
// skipped under -short.
func (s *Shared) Client(t testing.TB) client.Client {
	t.Helper()
	config := s.Config(t)
	s.clientOnce.Do(func() {
		var scheme *runtime.Scheme
		if scheme, s.clientErr = command.NewScheme(s.Kinds...); s.clientErr == nil {
			s.client, s.clientErr = client.New(config, client.Options{Scheme: scheme})
		}
	})
	if s.clientErr != nil {
		t.Fatalf("control plane client: %v", s.clientErr)
	}
	return s.client
}

// Scheme is command.NewScheme for a test, which fails if the scheme does
// not build.
func Scheme(t testing.TB, kinds ...func(*runtime.Scheme) error) *runtime.Scheme {
	t.Helper()
	scheme, err := command.NewScheme(kinds...)
	if err != nil {
		t.Fatal(err)
	}
	return scheme
}

// Main runs the package's tests, stops the control plane if one started, and
// exits: a control plane that does not stop fails the run.
func (s *Shared) Main(m *testing.M) {
	code := m.Run()
	if s.cp != nil {
		if err := s.cp.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
