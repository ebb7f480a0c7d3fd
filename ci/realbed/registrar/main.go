// Command registrar is the real bed's stand-in for the CSI node-driver-registrar
// sidecar, which the Go module proxy here refuses to serve
// (github.com/kubernetes-csi/node-driver-registrar/v2@v2.15.0: 403). It does
// the one thing kubelet needs from that sidecar: it asks the driver its name
// over CSI, then serves kubelet's plugin registration API on a socket in
// kubelet's plugins_registry directory, telling kubelet the driver's name and
// the socket kubelet reaches it at. It does not run the real sidecar's health
// endpoint nor remove the socket on a driver's restart.
//
//	registrar --csi-address /csi/csi.sock \
//	  --kubelet-csi-address /var/lib/kubelet/plugins/csi.baton-dr.io/csi.sock \
//	  --registration-dir /registration
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

func main() {
	csiAddress := flag.String("csi-address", "/csi/csi.sock", "the driver's CSI socket, as this container sees it")
	kubeletAddress := flag.String("kubelet-csi-address", "", "the same socket as kubelet (on the node) sees it (required)")
	registrationDir := flag.String("registration-dir", "/registration", "kubelet's plugins_registry directory, as this container sees it")
	waitLimit := flag.Duration("wait", 2*time.Minute, "how long to wait for the driver to answer")
	flag.Parse()
	if *kubeletAddress == "" {
		fmt.Fprintln(os.Stderr, "registrar: --kubelet-csi-address is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, *csiAddress, *kubeletAddress, *registrationDir, *waitLimit); err != nil {
		log.Printf("registrar: %v", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, csiAddress, kubeletAddress, registrationDir string, waitLimit time.Duration) error {
	name, err := driverName(ctx, csiAddress, waitLimit)
	if err != nil {
		return err
	}
	socket := filepath.Join(registrationDir, name+"-reg.sock")
	// A socket left by an earlier run would make Listen fail; kubelet
	// re-registers the new one when it appears.
	if err := os.Remove(socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	listener, err := net.Listen("unix", socket)
	if err != nil {
		return err
	}
	defer os.Remove(socket)
	server := grpc.NewServer()
	refused, failed := make(chan error, 1), make(chan error, 1)
	registration.RegisterRegistrationServer(server, &registrar{name: name, endpoint: kubeletAddress, refused: refused})
	go func() { failed <- server.Serve(listener) }()
	log.Printf("registrar: serving %s for driver %s at %s", socket, name, kubeletAddress)
	select {
	case <-ctx.Done():
		server.GracefulStop()
		return nil
	case err := <-refused:
		// Graceful: kubelet gets the answer to the call that refused.
		server.GracefulStop()
		return err
	case err := <-failed:
		return err
	}
}

// driverName asks the driver at address for its name, waiting up to limit
// for it to answer: the sidecar starts beside the driver, not after it.
func driverName(ctx context.Context, address string, limit time.Duration) (string, error) {
	conn, err := grpc.NewClient("unix://"+address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	identity := csispec.NewIdentityClient(conn)
	for {
		info, err := identity.GetPluginInfo(ctx, &csispec.GetPluginInfoRequest{}, grpc.WaitForReady(true))
		if err == nil {
			if info.GetName() == "" {
				return "", fmt.Errorf("the driver at %s reports no name", address)
			}
			return info.GetName(), nil
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("the driver at %s did not answer within %s: %w", address, limit, err)
		}
		time.Sleep(time.Second)
	}
}

// registrar answers kubelet's plugin watcher.
type registrar struct {
	registration.UnimplementedRegistrationServer
	name, endpoint string
	refused        chan<- error
}

func (r *registrar) GetInfo(context.Context, *registration.InfoRequest) (*registration.PluginInfo, error) {
	return &registration.PluginInfo{Type: registration.CSIPlugin, Name: r.name, Endpoint: r.endpoint,
		SupportedVersions: []string{"1.0.0"}}, nil
}

// NotifyRegistrationStatus ends the registrar when kubelet refuses the
// driver, as the real sidecar does: the container restarts and registers anew.
func (r *registrar) NotifyRegistrationStatus(_ context.Context, status *registration.RegistrationStatus) (*registration.RegistrationStatusResponse, error) {
	if !status.GetPluginRegistered() {
		select {
		case r.refused <- fmt.Errorf("kubelet refused the driver %s: %s", r.name, status.GetError()):
		default:
		}
		return &registration.RegistrationStatusResponse{}, nil
	}
	log.Printf("registrar: kubelet registered %s", r.name)
	return &registration.RegistrationStatusResponse{}, nil
}
