package csi_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	csiapi "github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"

	"github.com/baton-dr/baton/csi"
	"github.com/baton-dr/baton/storage/chain"
)

// The node's data path on the real operating system: loop devices over
// sparse files, real mkfs.ext4 and mkfs.xfs, mount and blkid, through the
// driver's gRPC Node service.

type osNode struct {
	w       *world
	d       *driver
	devices *loopDevices
	paths   string
}

func newOSNode(t *testing.T) *osNode {
	devices := newLoopDevices(t)
	w := newWorld(t)
	d := w.newDriverWith(clusterA, "a1", w.secret(clusterA), devices, csi.OSMounter{})
	return &osNode{w: w, d: d, devices: devices, paths: scratch(t)}
}

// device creates a volume and returns its handle and loop device.
func (n *osNode) device(t *testing.T, name string, capability *csiapi.VolumeCapability) (string, string) {
	t.Helper()
	r, err := n.d.controller.CreateVolume(ctx, &csiapi.CreateVolumeRequest{Name: name, CapacityRange: &csiapi.CapacityRange{RequiredBytes: 512 << 20},
		VolumeCapabilities: []*csiapi.VolumeCapability{capability}, Parameters: map[string]string{"placeCount": "2"}, Secrets: n.d.secrets})
	if err != nil {
		t.Fatal(err)
	}
	handle := r.GetVolume().GetVolumeId()
	root, _ := chain.ParseRef(handle)
	device, err := n.devices.Device(ctx, n.w.volume(root))
	if err != nil {
		t.Fatal(err)
	}
	return handle, device
}

func (n *osNode) stage(handle, staging string, capability *csiapi.VolumeCapability) error {
	_, err := n.d.node.NodeStageVolume(ctx, &csiapi.NodeStageVolumeRequest{VolumeId: handle, StagingTargetPath: staging,
		VolumeCapability: capability, Secrets: n.d.secrets})
	return err
}

func mkfs(t *testing.T, tool, device string) {
	t.Helper()
	if out, err := exec.Command(tool, "-q", device).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", tool, device, err, out)
	}
}

func TestAnXFSVolumeWithoutFsTypeMountsAsXFS(t *testing.T) {
	n := newOSNode(t)
	handle, device := n.device(t, "xfs-adopted", mountCapability(""))
	mkfs(t, "mkfs.xfs", device)
	staging, target := filepath.Join(n.paths, "staging"), filepath.Join(n.paths, "target")
	if err := n.stage(handle, staging, mountCapability("")); err != nil {
		t.Fatalf("staging an XFS volume without fsType: %v", err)
	}
	if got := mountType(t, staging); got != "xfs" {
		t.Fatalf("mounted as %q, want xfs", got)
	}
	root, _ := chain.ParseRef(handle)
	if v := n.w.volume(root); v.FsFound != "xfs" {
		t.Errorf("recorded filesystem %q, want xfs", v.FsFound)
	}
	if err := n.stage(handle, staging, mountCapability("")); err != nil {
		t.Errorf("staging again: %v", err)
	}
	_, err := n.d.node.NodePublishVolume(ctx, &csiapi.NodePublishVolumeRequest{VolumeId: handle, StagingTargetPath: staging,
		TargetPath: target, VolumeCapability: mountCapability("")})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "hello"), []byte("baton"), 0o600); err != nil {
		t.Fatalf("writing through the published path: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(staging, "hello")); err != nil || string(data) != "baton" {
		t.Fatalf("the staged filesystem reads %q, %v", data, err)
	}
	stats, err := n.d.node.NodeGetVolumeStats(ctx, &csiapi.NodeGetVolumeStatsRequest{VolumeId: handle, VolumePath: target})
	if err != nil || len(stats.GetUsage()) != 2 || stats.GetUsage()[0].GetTotal() <= 0 || stats.GetUsage()[1].GetUsed() <= 0 {
		t.Errorf("stats %v, %v: want bytes and inodes", stats, err)
	}
	if _, err := n.d.node.NodeUnpublishVolume(ctx, &csiapi.NodeUnpublishVolumeRequest{VolumeId: handle, TargetPath: target}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("the target path outlived NodeUnpublish: %v", err)
	}
	if _, err := n.d.node.NodeUnstageVolume(ctx, &csiapi.NodeUnstageVolumeRequest{VolumeId: handle, StagingTargetPath: staging}); err != nil {
		t.Fatal(err)
	}
	if got := mountType(t, staging); got != "" {
		t.Errorf("still mounted (%s) after NodeUnstage", got)
	}
	if blkid(t, device) != "xfs" {
		t.Errorf("the device no longer carries xfs")
	}
}

func TestABlankVolumeWithoutFsTypeGetsExt4(t *testing.T) {
	n := newOSNode(t)
	handle, device := n.device(t, "blank", mountCapability(""))
	staging := filepath.Join(n.paths, "staging")
	if err := n.stage(handle, staging, mountCapability("")); err != nil {
		t.Fatal(err)
	}
	if got := mountType(t, staging); got != "ext4" || blkid(t, device) != "ext4" {
		t.Fatalf("a blank device without fsType mounted as %q (device %q), want ext4", got, blkid(t, device))
	}
	root, _ := chain.ParseRef(handle)
	if v := n.w.volume(root); v.FsFound != "ext4" {
		t.Errorf("recorded filesystem %q, want ext4", v.FsFound)
	}
	if hasCapability(unix.CAP_SYS_RESOURCE) {
		grow(t, n, handle, staging)
	} else {
		t.Log("growing ext4 online needs CAP_SYS_RESOURCE, which this process lacks; TestAnXFSVolumeGrowsOnline grows XFS")
	}
}

func TestAnXFSVolumeGrowsOnline(t *testing.T) {
	n := newOSNode(t)
	handle, device := n.device(t, "growing", mountCapability("xfs"))
	staging := filepath.Join(n.paths, "staging")
	if err := n.stage(handle, staging, mountCapability("xfs")); err != nil {
		t.Fatal(err)
	}
	if blkid(t, device) != "xfs" {
		t.Fatalf("a blank device asked as xfs carries %q", blkid(t, device))
	}
	grow(t, n, handle, staging)
}

// grow expands a staged volume from 512 MiB to 1 GiB and checks the
// filesystem followed.
func grow(t *testing.T, n *osNode, handle, staging string) {
	t.Helper()
	before, err := n.d.node.NodeGetVolumeStats(ctx, &csiapi.NodeGetVolumeStatsRequest{VolumeId: handle, VolumePath: staging})
	if err != nil {
		t.Fatal(err)
	}
	expanded, err := n.d.controller.ControllerExpandVolume(ctx, &csiapi.ControllerExpandVolumeRequest{VolumeId: handle,
		CapacityRange: &csiapi.CapacityRange{RequiredBytes: 1 << 30}, Secrets: n.d.secrets})
	if err != nil || !expanded.GetNodeExpansionRequired() || expanded.GetCapacityBytes() != 1<<30 {
		t.Fatalf("ControllerExpandVolume = %v, %v", expanded, err)
	}
	if _, err := n.d.node.NodeExpandVolume(ctx, &csiapi.NodeExpandVolumeRequest{VolumeId: handle, VolumePath: staging,
		VolumeCapability: mountCapability(""), Secrets: n.d.secrets}); err != nil {
		t.Fatal(err)
	}
	after, err := n.d.node.NodeGetVolumeStats(ctx, &csiapi.NodeGetVolumeStatsRequest{VolumeId: handle, VolumePath: staging})
	if err != nil || after.GetUsage()[0].GetTotal() < before.GetUsage()[0].GetTotal()*3/2 {
		t.Errorf("filesystem of %d bytes after growing the volume from 512 MiB to 1 GiB (before %d): %v",
			after.GetUsage()[0].GetTotal(), before.GetUsage()[0].GetTotal(), err)
	}
}

// hasCapability reports whether this process holds an effective capability.
func hasCapability(capability int) bool {
	var header = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&header, &data[0]); err != nil {
		return false
	}
	return data[capability/32].Effective&(1<<(uint(capability)%32)) != 0
}

func TestANamedFsTypeRefusesADeviceCarryingAnother(t *testing.T) {
	n := newOSNode(t)
	handle, device := n.device(t, "xfs-asked-ext4", mountCapability("ext4"))
	mkfs(t, "mkfs.xfs", device)
	staging := filepath.Join(n.paths, "staging")
	err := n.stage(handle, staging, mountCapability("ext4"))
	wantCode(t, "staging an XFS device as ext4", err, codes.FailedPrecondition)
	if got := mountType(t, staging); got != "" || blkid(t, device) != "xfs" {
		t.Fatalf("after the refusal: mounted %q, device carries %q; want nothing mounted and xfs untouched", got, blkid(t, device))
	}
}

func TestABlankDeviceOfAVolumeThatHeldAFilesystemIsNotFormatted(t *testing.T) {
	n := newOSNode(t)
	handle, device := n.device(t, "lost", mountCapability(""))
	root, _ := chain.ParseRef(handle)
	n.w.must(n.w.api(clusterA).RecordFilesystem(ctx, root, "xfs"))
	err := n.stage(handle, filepath.Join(n.paths, "staging"), mountCapability(""))
	wantCode(t, "staging a blank device of a volume that carried xfs", err, codes.FailedPrecondition)
	if blkid(t, device) != "" {
		t.Errorf("the device was formatted (%s)", blkid(t, device))
	}
}

func TestABlockVolumeIsPublishedAsTheRawDevice(t *testing.T) {
	n := newOSNode(t)
	block := &csiapi.VolumeCapability{AccessType: &csiapi.VolumeCapability_Block{Block: &csiapi.VolumeCapability_BlockVolume{}},
		AccessMode: &csiapi.VolumeCapability_AccessMode{Mode: csiapi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
	handle, device := n.device(t, "vm-disk", block)
	staging, target := filepath.Join(n.paths, "staging"), filepath.Join(n.paths, "pod", "disk")
	n.w.must(os.MkdirAll(staging, 0o750))
	if err := n.stage(handle, staging, block); err != nil {
		t.Fatal(err)
	}
	if _, err := n.d.node.NodePublishVolume(ctx, &csiapi.NodePublishVolumeRequest{VolumeId: handle, StagingTargetPath: staging,
		TargetPath: target, VolumeCapability: block}); err != nil {
		t.Fatal(err)
	}
	published, isBlock := statBlock(t, target)
	want, _ := statBlock(t, device)
	if !isBlock || published != want {
		t.Fatalf("the target is block=%v rdev %d, want the raw device %s (rdev %d)", isBlock, published, device, want)
	}
	if blkid(t, device) != "" {
		t.Errorf("a Block volume was formatted: %s", blkid(t, device))
	}
	stats, err := n.d.node.NodeGetVolumeStats(ctx, &csiapi.NodeGetVolumeStatsRequest{VolumeId: handle, VolumePath: target})
	if err != nil || len(stats.GetUsage()) != 1 || stats.GetUsage()[0].GetTotal() != 512<<20 {
		t.Errorf("block stats %v, %v; want one usage of 512 MiB", stats, err)
	}
	for _, call := range []func() error{
		func() error {
			_, err := n.d.node.NodeUnpublishVolume(ctx, &csiapi.NodeUnpublishVolumeRequest{VolumeId: handle, TargetPath: target})
			return err
		},
		func() error {
			_, err := n.d.node.NodeUnstageVolume(ctx, &csiapi.NodeUnstageVolumeRequest{VolumeId: handle, StagingTargetPath: staging})
			return err
		},
	} {
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(staging, "device")); !os.IsNotExist(err) {
		t.Errorf("the staged device file outlived NodeUnstage: %v", err)
	}
}
