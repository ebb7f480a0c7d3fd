package csi

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// Topology keys NodeGetInfo reports.
const (
	TopologySite = "topology.baton-dr.io/site"
	TopologyNode = "topology.baton-dr.io/node"
)

// blockFile is the file under a Block volume's staging path that the device
// is bind-mounted on; NodePublishVolume binds it to the target.
const blockFile = "device"

// Devices finds an attached member's block device on this node.
type Devices interface {
	// Device is the path of v's block device here. ErrDeviceNotReady while
	// the node agent has not brought it up (the kubelet retries).
	Device(ctx context.Context, v core.Volume) (string, error)
}

// VolumeStats is what NodeGetVolumeStats reports of a path.
type VolumeStats struct {
	Block                                 bool
	TotalBytes, AvailableBytes, UsedBytes uint64
	TotalInodes, FreeInodes, UsedInodes   uint64
}

// Mounter is what the node service does to the operating system: probe,
// format, mount, resize, and the directories and files mounts go on.
type Mounter interface {
	// Filesystem is the filesystem the device carries; "" when it is blank.
	Filesystem(ctx context.Context, device string) (string, error)
	Format(ctx context.Context, device, fsType string) error
	Mount(ctx context.Context, device, target, fsType string, flags []string, readOnly bool) error
	BindMount(ctx context.Context, source, target string, readOnly bool) error
	Unmount(ctx context.Context, target string) error
	// Mounted reports whether something is mounted at path.
	Mounted(ctx context.Context, path string) (bool, error)
	Resize(ctx context.Context, device, mountPath, fsType string) error
	Stats(ctx context.Context, path string) (VolumeStats, error)
	MakeDir(path string) error
	MakeFile(path string) error
	// Remove removes a file or an empty directory; a missing one is no error.
	Remove(path string) error
}

// Node is the CSI Node service of one node.
type Node struct {
	csi.UnimplementedNodeServer
	Clusters *Clusters
	Locks    *Locks
	NodeID   string
	Site     string
	Devices  Devices
	Mounter  Mounter
	// DeviceWait bounds how long NodeStageVolume waits for a device the
	// node agent has not made yet, and NodeExpandVolume for one it has not
	// grown yet (device_wait.go); zero answers at once (the simulation,
	// whose nodes make devices on its own clock).
	DeviceWait time.Duration
}

var nodeCapabilities = []csi.NodeServiceCapability_RPC_Type{
	csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME,
	csi.NodeServiceCapability_RPC_EXPAND_VOLUME,
	csi.NodeServiceCapability_RPC_GET_VOLUME_STATS,
}

func (n *Node) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	out := make([]*csi.NodeServiceCapability, 0, len(nodeCapabilities))
	for _, t := range nodeCapabilities {
		out = append(out, &csi.NodeServiceCapability{Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: t}}})
	}
	return &csi.NodeGetCapabilitiesResponse{Capabilities: out}, nil
}

func (n *Node) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: n.NodeID, AccessibleTopology: &csi.Topology{
		Segments: map[string]string{TopologySite: n.Site, TopologyNode: n.NodeID}}}, nil
}

// begin is the RPC's preamble (request.go) under the node's locks, keyed by
// the volume's handle.
func (n *Node) begin(handle chain.Ref, secrets map[string]string) (request, error) {
	return begin(n.Locks, n.Clusters, handle.String(), secrets)
}

// lock takes only the volume's node-side lock, for the RPCs that ask no
// cluster.
func (n *Node) lock(handle chain.Ref) (func(), error) { return n.Locks.Lock(handle.String()) }

// lockForPath is the preamble of the RPCs that undo a mount at one path and
// ask no cluster (unstage, unpublish): the handle and the path are checked,
// then the volume's node-side lock is taken. The error is already a status.
func (n *Node) lockForPath(volumeID, pathName, path string) (release func(), err error) {
	if path == "" {
		return nil, invalid("%s is required", pathName)
	}
	handle, err := parseHandle(volumeID)
	if err != nil {
		return nil, err
	}
	release, err = n.lock(handle)
	if err != nil {
		return nil, toStatus(err)
	}
	return release, nil
}

func (n *Node) NodeStageVolume(ctx context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	switch {
	case req.GetStagingTargetPath() == "":
		return nil, invalid("staging target path is required")
	case req.GetVolumeCapability() == nil:
		return nil, invalid("volume capability is required")
	}
	if err := checkCapability(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	handle, err := parseHandle(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	r, err := n.begin(handle, req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	defer r.release()
	v, err := ResolveAttach(ctx, r.set, handle, n.NodeID)
	if err != nil {
		return nil, toStatus(err)
	}
	device, err := n.device(ctx, v)
	if err != nil {
		return nil, toStatus(err)
	}
	if req.GetVolumeCapability().GetBlock() != nil {
		return &csi.NodeStageVolumeResponse{}, toStatus(n.stageBlock(ctx, device, req.GetStagingTargetPath()))
	}
	mount := req.GetVolumeCapability().GetMount()
	return &csi.NodeStageVolumeResponse{}, toStatus(n.stageFilesystem(ctx, r.set, v, device, req.GetStagingTargetPath(), mount))
}

// stageBlock binds the raw device onto a file under the staging path.
func (n *Node) stageBlock(ctx context.Context, device, staging string) error {
	target := filepath.Join(staging, blockFile)
	if mounted, err := n.Mounter.Mounted(ctx, target); err != nil || mounted {
		return err
	}
	if err := n.Mounter.MakeFile(target); err != nil {
		return err
	}
	return n.Mounter.BindMount(ctx, device, target, false)
}

// stageFilesystem mounts the device at the staging path, formatting it only
// when rule 7 says so, and records the filesystem it found or made.
func (n *Node) stageFilesystem(ctx context.Context, set *Set, v core.Volume, device, staging string, mount *csi.VolumeCapability_MountVolume) error {
	if mounted, err := n.Mounter.Mounted(ctx, staging); err != nil || mounted {
		return err
	}
	found, err := n.Mounter.Filesystem(ctx, device)
	if err != nil {
		return err
	}
	format, fsType, err := chooseFilesystem(found, askedFilesystem(mount.GetFsType()), v.FsFound)
	if err != nil {
		return fmt.Errorf("volume %s (%s): %w", v.Root, v.Ref, err)
	}
	if format {
		if err := n.Mounter.Format(ctx, device, fsType); err != nil {
			return err
		}
	}
	if v.FsFound != fsType {
		api, err := set.Cluster(v.Ref.Cluster)
		if err != nil {
			return err
		}
		if err := api.RecordFilesystem(ctx, v.Ref, fsType); err != nil {
			return err
		}
	}
	if err := n.Mounter.MakeDir(staging); err != nil {
		return err
	}
	return n.Mounter.Mount(ctx, device, staging, fsType, mount.GetMountFlags(), false)
}

func (n *Node) NodeUnstageVolume(ctx context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	release, err := n.lockForPath(req.GetVolumeId(), "staging target path", req.GetStagingTargetPath())
	if err != nil {
		return nil, err
	}
	defer release()
	staging := req.GetStagingTargetPath()
	for _, path := range []string{filepath.Join(staging, blockFile), staging} {
		if err := n.unmount(ctx, path); err != nil {
			return nil, toStatus(err)
		}
	}
	if err := n.Mounter.Remove(filepath.Join(staging, blockFile)); err != nil {
		return nil, toStatus(err)
	}
	return &csi.NodeUnstageVolumeResponse{}, nil
}

// unmount unmounts path if something is mounted there.
func (n *Node) unmount(ctx context.Context, path string) error {
	mounted, err := n.Mounter.Mounted(ctx, path)
	if err != nil || !mounted {
		return err
	}
	return n.Mounter.Unmount(ctx, path)
}

func (n *Node) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	switch {
	case req.GetTargetPath() == "":
		return nil, invalid("target path is required")
	case req.GetVolumeCapability() == nil:
		return nil, invalid("volume capability is required")
	case req.GetStagingTargetPath() == "":
		return nil, invalid("staging target path is required: the volume is staged first")
	}
	if err := checkCapability(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	handle, err := parseHandle(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	release, err := n.lock(handle)
	if err != nil {
		return nil, toStatus(err)
	}
	defer release()
	target, source := req.GetTargetPath(), req.GetStagingTargetPath()
	block := req.GetVolumeCapability().GetBlock() != nil
	if block {
		source = filepath.Join(source, blockFile)
	}
	if mounted, err := n.Mounter.Mounted(ctx, target); err != nil || mounted {
		return &csi.NodePublishVolumeResponse{}, toStatus(err)
	}
	if staged, err := n.Mounter.Mounted(ctx, source); err != nil || !staged {
		return nil, toStatus(cmpErr(err, n.notStaged(ctx, handle, source, req.GetSecrets())))
	}
	makeTarget := n.Mounter.MakeDir
	if block {
		makeTarget = n.Mounter.MakeFile
	}
	if err := makeTarget(target); err != nil {
		return nil, toStatus(err)
	}
	readOnly := req.GetReadonly() || req.GetVolumeCapability().GetAccessMode().GetMode() == csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY
	return &csi.NodePublishVolumeResponse{}, toStatus(n.Mounter.BindMount(ctx, source, target, readOnly))
}

// notStaged is why a volume is not staged at source: ErrNoVolume (NotFound,
// the spec's answer for a volume that does not exist) when the clusters
// prove no such volume exists, ErrNotStaged (FailedPrecondition) otherwise.
// The clusters are asked only on this path, a CO's mistake: a publish of a
// staged volume asks none. Clusters that cannot be opened or do not answer
// prove nothing, and the answer stays ErrNotStaged.
func (n *Node) notStaged(ctx context.Context, handle chain.Ref, source string, secrets map[string]string) error {
	notStaged := fmt.Errorf("%w: volume %s is not staged at %s", ErrNotStaged, handle, source)
	set, err := n.Clusters.Open(secrets)
	if err != nil {
		return notStaged
	}
	if _, err := resolveRecorded(ctx, set, handle); errors.Is(err, ErrNoVolume) {
		return fmt.Errorf("volume %s is not staged at %s: %w", handle, source, err)
	}
	return notStaged
}

func (n *Node) NodeUnpublishVolume(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	release, err := n.lockForPath(req.GetVolumeId(), "target path", req.GetTargetPath())
	if err != nil {
		return nil, err
	}
	defer release()
	if err := n.unmount(ctx, req.GetTargetPath()); err != nil {
		return nil, toStatus(err)
	}
	return &csi.NodeUnpublishVolumeResponse{}, toStatus(n.Mounter.Remove(req.GetTargetPath()))
}

func (n *Node) NodeGetVolumeStats(ctx context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	if req.GetVolumePath() == "" {
		return nil, invalid("volume path is required")
	}
	handle, err := parseHandle(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	mounted, err := n.Mounter.Mounted(ctx, req.GetVolumePath())
	if err != nil {
		return nil, toStatus(err)
	}
	if !mounted {
		return nil, toStatus(fmt.Errorf("%w: nothing of volume %s is mounted at %s", ErrNotMounted, handle, req.GetVolumePath()))
	}
	st, err := n.Mounter.Stats(ctx, req.GetVolumePath())
	if err != nil {
		return nil, toStatus(err)
	}
	usage := []*csi.VolumeUsage{{Unit: csi.VolumeUsage_BYTES, Total: int64(st.TotalBytes), Available: int64(st.AvailableBytes), Used: int64(st.UsedBytes)}}
	if !st.Block {
		usage = append(usage, &csi.VolumeUsage{Unit: csi.VolumeUsage_INODES, Total: int64(st.TotalInodes), Available: int64(st.FreeInodes), Used: int64(st.UsedInodes)})
	}
	return &csi.NodeGetVolumeStatsResponse{Usage: usage}, nil
}

func (n *Node) NodeExpandVolume(ctx context.Context, req *csi.NodeExpandVolumeRequest) (*csi.NodeExpandVolumeResponse, error) {
	if req.GetVolumePath() == "" {
		return nil, invalid("volume path is required")
	}
	handle, err := parseHandle(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	r, err := n.begin(handle, req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	defer r.release()
	v, err := n.expand(ctx, r.set, handle, req.GetVolumePath(), req.GetVolumeCapability().GetBlock() != nil)
	if err != nil {
		return nil, toStatus(err)
	}
	return &csi.NodeExpandVolumeResponse{CapacityBytes: int64(v.SizeBytes)}, nil
}

// expand grows the filesystem at path to the device's new size, once the
// device has it (grownDevice).
func (n *Node) expand(ctx context.Context, set *Set, handle chain.Ref, path string, block bool) (core.Volume, error) {
	end, api, err := localEnd(ctx, set, handle)
	if err != nil {
		return core.Volume{}, err
	}
	v, err := api.Volume(ctx, end)
	if err != nil {
		return core.Volume{}, err
	}
	device, err := n.grownDevice(ctx, v)
	if err != nil || block || v.VolumeMode == core.Block {
		return v, err
	}
	mounted, err := n.Mounter.Mounted(ctx, path)
	if err != nil {
		return core.Volume{}, err
	}
	if !mounted {
		return core.Volume{}, fmt.Errorf("%w: nothing is mounted at %s", ErrNotMounted, path)
	}
	fsType, err := n.Mounter.Filesystem(ctx, device)
	if err != nil {
		return core.Volume{}, err
	}
	return v, n.Mounter.Resize(ctx, device, path, fsType)
}

func cmpErr(first, second error) error {
	if first != nil {
		return first
	}
	return second
}
