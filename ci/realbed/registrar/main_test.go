package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// identityDouble is a test double of a CSI driver's Identity service: the
// registrar asks a driver only its name.
type identityDouble struct {
	csispec.UnimplementedIdentityServer
	name string
}

func (d identityDouble) GetPluginInfo(context.Context, *csispec.GetPluginInfoRequest) (*csispec.GetPluginInfoResponse, error) {
	return &csispec.GetPluginInfoResponse{Name: d.name, VendorVersion: "test"}, nil
}

// startRegistrar serves a driver double on a socket, runs the registrar
// against it, and returns a client of the registration socket kubelet would
// find, and the registrar's result.
func startRegistrar(t *testing.T) (registration.RegistrationClient, <-chan error, string) {
	t.Helper()
	// Not t.TempDir: a unix socket's path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "reg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	driverSocket := filepath.Join(dir, "csi.sock")
	listener, err := net.Listen("unix", driverSocket)
	if err != nil {
		t.Fatal(err)
	}
	driver := grpc.NewServer()
	csispec.RegisterIdentityServer(driver, identityDouble{name: "csi.example.dev"})
	go func() { _ = driver.Serve(listener) }()
	t.Cleanup(driver.Stop)

	registrationDir := filepath.Join(dir, "plugins_registry")
	if err := os.Mkdir(registrationDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, driverSocket, "/var/lib/kubelet/plugins/csi.example.dev/csi.sock", registrationDir, 30*time.Second)
	}()
	socket := filepath.Join(registrationDir, "csi.example.dev-reg.sock")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(socket); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the registrar ended before serving: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no registration socket %s", socket)
		}
	}
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return registration.NewRegistrationClient(conn), done, socket
}

func TestKubeletLearnsTheDriversNameAndSocket(t *testing.T) {
	client, _, _ := startRegistrar(t)
	info, err := client.GetInfo(context.Background(), &registration.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Type != registration.CSIPlugin || info.Name != "csi.example.dev" ||
		info.Endpoint != "/var/lib/kubelet/plugins/csi.example.dev/csi.sock" || len(info.SupportedVersions) == 0 {
		t.Fatalf("GetInfo = %v", info)
	}
	if _, err := client.NotifyRegistrationStatus(context.Background(), &registration.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Fatal(err)
	}
}

func TestARefusedRegistrationEndsTheRegistrarAndRemovesItsSocket(t *testing.T) {
	client, done, socket := startRegistrar(t)
	if _, err := client.NotifyRegistrationStatus(context.Background(),
		&registration.RegistrationStatus{PluginRegistered: false, Error: "version 9 unsupported"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "version 9 unsupported") {
			t.Fatalf("run = %v, want the refusal", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the registrar kept running after kubelet refused the driver")
	}
	if _, err := os.Stat(socket); !os.IsNotExist(err) {
		t.Fatalf("the registration socket is still there: %v", err)
	}
}
