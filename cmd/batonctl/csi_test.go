package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/baton-dr/baton/csi"
)

func serveIdentity(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "batonctl")
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "csi.sock")
	listener, err := csi.ListenUnix(socket)
	if err != nil {
		t.Fatal(err)
	}
	services := csi.Services{Identity: &csi.Identity{Version: "v-test"}, AddonsIdentity: &csi.AddonsIdentity{}, Replication: &csi.Replication{}}
	server := csi.NewCSIServer(services, logr.Discard())
	addons := csi.NewAddonsServer(services, logr.Discard())
	// The csi-addons services have their own socket, as the sidecar expects.
	addonsListener, err := csi.ListenUnix(filepath.Join(dir, "addons.sock"))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = server.Serve(listener) }()
	go func() { _ = addons.Serve(addonsListener) }()
	t.Cleanup(func() { server.Stop(); addons.Stop(); _ = os.RemoveAll(dir) })
	return dir
}

func batonctl(args ...string) (string, error) {
	var out bytes.Buffer
	root := newRootCommand(environment{now: time.Now})
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestCSICallsAnyRPCByHand(t *testing.T) {
	dir := serveIdentity(t)
	out, err := batonctl("csi", "GetPluginInfo", "--socket", "unix://"+filepath.Join(dir, "csi.sock"))
	// protojson's spacing is deliberately unstable: read the JSON, not its text.
	var info struct{ Name, VendorVersion string }
	if err != nil || json.Unmarshal([]byte(out), &info) != nil || info.Name != "csi.baton-dr.io" || info.VendorVersion != "v-test" {
		t.Fatalf("GetPluginInfo: %q, %v", out, err)
	}
	out, err = batonctl("csi", "identity.Identity.GetCapabilities", "--socket", filepath.Join(dir, "addons.sock"))
	if err != nil || !strings.Contains(out, "VOLUME_REPLICATION") {
		t.Fatalf("csi-addons GetCapabilities: %q, %v", out, err)
	}
	_, err = batonctl("csi", "PromoteVolume", "--socket", filepath.Join(dir, "addons.sock"), "--json", `{"force":true}`)
	if err == nil || !strings.Contains(err.Error(), "InvalidArgument") || !strings.Contains(err.Error(), "replication_source") {
		t.Fatalf("PromoteVolume without a source: %v, want the driver's InvalidArgument", err)
	}
	if _, err := batonctl("csi", "Probe", "--socket", "/x"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("an ambiguous name: %v", err)
	}
	if _, err := batonctl("csi", "CreateVolume", "--socket", "/x", "--json", `{"nmae":"x"}`); err == nil || !strings.Contains(err.Error(), "--json") {
		t.Errorf("a request that is not a CreateVolumeRequest: %v", err)
	}
	if out, err := batonctl("csi", "list"); err != nil || !strings.Contains(out, "replication.Controller.ResyncVolume") {
		t.Errorf("list: %v", err)
	}
}
