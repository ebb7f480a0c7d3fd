package csi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

// StorageClass parameters.
const (
	// ParameterPlaceCount is the number of nodes of the site that hold a
	// replica (DRBD, protocol C); default 1.
	ParameterPlaceCount = "placeCount"
	// ParameterProvisioning is thin (default) or thick.
	ParameterProvisioning = "provisioning"
	// ParameterCluster is the cluster that creates the volume; default the
	// one cluster the secret marks local.
	ParameterCluster = "cluster"
	// kubernetesPrefix marks the parameters the CO adds of its own.
	kubernetesPrefix = "csi.storage.k8s.io/"
)

const (
	defaultSizeBytes = 1 << 30
	sizeQuantumBytes = 1 << 20 // sizes are rounded up to whole MiB: a multiple of every zvol block size
)

// Controller is the CSI Controller service. The volume handle it returns is
// the new volume's own reference, the root of the chain every later fail-over
// extends; the PersistentVolume keeps it for ever.
type Controller struct {
	csi.UnimplementedControllerServer
	Clusters *Clusters
	Locks    *Locks
}

var controllerCapabilities = []csi.ControllerServiceCapability_RPC_Type{
	csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
	csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
	csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
	csi.ControllerServiceCapability_RPC_CLONE_VOLUME,
	csi.ControllerServiceCapability_RPC_EXPAND_VOLUME,
	csi.ControllerServiceCapability_RPC_GET_CAPACITY,
}

func (c *Controller) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	out := make([]*csi.ControllerServiceCapability, 0, len(controllerCapabilities))
	for _, t := range controllerCapabilities {
		out = append(out, &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{
			Rpc: &csi.ControllerServiceCapability_RPC{Type: t}}})
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: out}, nil
}

// begin is the RPC's preamble (request.go) under the controller's locks.
func (c *Controller) begin(key string, secrets map[string]string) (request, error) {
	return begin(c.Locks, c.Clusters, key, secrets)
}

func (c *Controller) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, invalid("name is required")
	}
	shape, err := shapeOf(req.GetCapacityRange(), req.GetVolumeCapabilities(), req.GetParameters())
	if err != nil {
		return nil, err
	}
	r, err := c.begin("name/"+req.GetName(), req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	defer r.release()
	v, err := c.create(ctx, r.set, core.CreateRequest{Name: req.GetName(), Shape: shape}, req.GetVolumeContentSource(), req.GetParameters())
	if err != nil {
		return nil, toStatus(err)
	}
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: v.Root.String(), CapacityBytes: int64(v.SizeBytes),
		ContentSource: req.GetVolumeContentSource()}}, nil
}

// create makes the volume on the cluster the parameters (or its source) name.
func (c *Controller) create(ctx context.Context, set *Set, request core.CreateRequest, source *csi.VolumeContentSource, parameters map[string]string) (core.Volume, error) {
	switch {
	case source.GetSnapshot() != nil:
		ref, err := core.ParseSnapshotRef(source.GetSnapshot().GetSnapshotId())
		if err != nil {
			return core.Volume{}, fmt.Errorf("%w: source snapshot: %w", core.ErrNotFound, err)
		}
		api, err := c.sourceCluster(set, ref.Member.Cluster, parameters)
		if err != nil {
			return core.Volume{}, err
		}
		return api.CreateVolumeFrom(ctx, request, core.CloneSource{Snapshot: ref})
	case source.GetVolume() != nil:
		end, err := activeEnd(ctx, set, source.GetVolume().GetVolumeId(), "source volume")
		if err != nil {
			return core.Volume{}, err
		}
		api, err := c.sourceCluster(set, end.Cluster, parameters)
		if err != nil {
			return core.Volume{}, err
		}
		return api.CreateVolumeFrom(ctx, request, core.CloneSource{Volume: end})
	case source != nil:
		return core.Volume{}, invalid("volume content source must be a snapshot or a volume")
	}
	id, err := creatingCluster(set, parameters[ParameterCluster])
	if err != nil {
		return core.Volume{}, err
	}
	api, err := set.Cluster(id)
	if err != nil {
		return core.Volume{}, err
	}
	return api.CreateVolume(ctx, request)
}

// sourceCluster is the cluster holding a clone's source: clones are made
// where their origin is; a cluster parameter naming another one is refused.
func (c *Controller) sourceCluster(set *Set, holder chain.ClusterID, parameters map[string]string) (storageapi.API, error) {
	if p := parameters[ParameterCluster]; p != "" && chain.ClusterID(p) != holder {
		return storageapi.API{}, invalid("parameter %s=%s, but the content source lives on cluster %s", ParameterCluster, p, holder)
	}
	return set.Cluster(holder)
}

// activeEnd resolves a handle to its chain's Active end, the member a clone
// or an expansion acts on.
func activeEnd(ctx context.Context, set *Set, handle, what string) (chain.Ref, error) {
	if handle == "" {
		return chain.Ref{}, invalid("%s ID is required", what)
	}
	root, err := chain.ParseRef(handle)
	if err != nil {
		return chain.Ref{}, fmt.Errorf("%w: %s: %w", core.ErrNotFound, what, err)
	}
	r, err := resolveRecorded(ctx, set, root)
	if err != nil {
		return chain.Ref{}, err
	}
	end := r.End()
	switch end.State {
	case chain.Active:
		return end.Ref, nil
	case chain.Unknown:
		return chain.Ref{}, fmt.Errorf("%w: the cluster of %s's end %s did not answer", chain.ErrUnreachable, root, end.Ref)
	}
	return chain.Ref{}, fmt.Errorf("%w: %s's end %s is %s", core.ErrNotActive, root, end.Ref, end.State)
}

// creatingCluster is the cluster a new volume is made on.
func creatingCluster(set *Set, parameter string) (chain.ClusterID, error) {
	if parameter != "" {
		if _, err := set.Cluster(chain.ClusterID(parameter)); err != nil {
			return "", invalid("parameter %s: %v", ParameterCluster, err)
		}
		return chain.ClusterID(parameter), nil
	}
	candidates := set.Local()
	if len(candidates) == 0 {
		candidates = set.IDs()
	}
	if len(candidates) != 1 {
		return "", invalid("parameter %s is required: the secret offers clusters %v", ParameterCluster, candidates)
	}
	return candidates[0], nil
}

// shapeOf reads size, mode, filesystem and parameters of a CreateVolume.
func shapeOf(capacity *csi.CapacityRange, capabilities []*csi.VolumeCapability, parameters map[string]string) (core.Shape, error) {
	shape := core.Shape{PlaceCount: 1, Provisioning: backend.Thin}
	size, err := sizeOf(capacity, defaultSizeBytes)
	if err != nil {
		return core.Shape{}, err
	}
	shape.SizeBytes = size
	if shape.VolumeMode, shape.FsType, err = modeOf(capabilities); err != nil {
		return core.Shape{}, err
	}
	for _, key := range slices.Sorted(maps.Keys(parameters)) {
		value := parameters[key]
		switch {
		case key == ParameterPlaceCount:
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				return core.Shape{}, invalid("parameter %s=%q must be a positive integer", key, value)
			}
			shape.PlaceCount = n
		case key == ParameterProvisioning && value == "thin":
			shape.Provisioning = backend.Thin
		case key == ParameterProvisioning && value == "thick":
			shape.Provisioning = backend.Thick
		case key == ParameterProvisioning:
			return core.Shape{}, invalid("parameter %s=%q must be thin or thick", key, value)
		case key == ParameterCluster, key == TargetClusterParameter, strings.HasPrefix(key, kubernetesPrefix):
		default:
			return core.Shape{}, invalid("unknown parameter %q (known: %s, %s, %s)", key, ParameterPlaceCount, ParameterProvisioning, ParameterCluster)
		}
	}
	return shape, nil
}

// sizeOf picks the size a capacity range asks for, rounded up to whole MiB.
func sizeOf(capacity *csi.CapacityRange, fallback uint64) (uint64, error) {
	required, limit := capacity.GetRequiredBytes(), capacity.GetLimitBytes()
	if required < 0 || limit < 0 {
		return 0, status.Errorf(codes.OutOfRange, "capacity range %d..%d is negative", required, limit)
	}
	size := uint64(required)
	if size == 0 {
		size = fallback
		if limit > 0 && uint64(limit) < size {
			size = uint64(limit)
		}
	}
	size = (size + sizeQuantumBytes - 1) / sizeQuantumBytes * sizeQuantumBytes
	if limit > 0 && size > uint64(limit) {
		return 0, status.Errorf(codes.OutOfRange, "capacity range %d..%d bytes holds no whole MiB", required, limit)
	}
	return size, nil
}

// modeOf checks the capabilities: one access type (block or mount) with one
// filesystem at most, and single-node access modes only.
func modeOf(capabilities []*csi.VolumeCapability) (core.VolumeMode, string, error) {
	if len(capabilities) == 0 {
		return "", "", invalid("volume capabilities are required")
	}
	var mode core.VolumeMode
	fsType := ""
	for _, c := range capabilities {
		if err := checkCapability(c); err != nil {
			return "", "", err
		}
		m := core.Filesystem
		if c.GetBlock() != nil {
			m = core.Block
		}
		if mode != "" && mode != m {
			return "", "", invalid("volume capabilities ask for both block and filesystem access")
		}
		mode = m
		if f := c.GetMount().GetFsType(); f != "" {
			if fsType != "" && f != fsType {
				return "", "", invalid("volume capabilities ask for filesystems %s and %s", fsType, f)
			}
			fsType = f
		}
	}
	return mode, fsType, nil
}

// supportedFilesystems are those the node formats and mounts.
var supportedFilesystems = []string{"ext4", "xfs"}

var supportedAccessModes = []csi.VolumeCapability_AccessMode_Mode{
	csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
	csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY,
	csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER,
	csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER,
}

// checkCapability refuses what the driver cannot serve, saying why.
func checkCapability(c *csi.VolumeCapability) error {
	switch {
	case c == nil:
		return invalid("a volume capability is empty")
	case c.GetBlock() == nil && c.GetMount() == nil:
		return invalid("a volume capability needs an access type, block or mount")
	case c.GetAccessMode() == nil:
		return invalid("a volume capability needs an access mode")
	case !slices.Contains(supportedAccessModes, c.GetAccessMode().GetMode()):
		return invalid("access mode %s is not supported: a volume is attached to one node at a time", c.GetAccessMode().GetMode())
	case c.GetMount() != nil && c.GetMount().GetFsType() != "" && !slices.Contains(supportedFilesystems, c.GetMount().GetFsType()):
		return invalid("filesystem %q is not supported (%v)", c.GetMount().GetFsType(), supportedFilesystems)
	}
	return nil
}

func (c *Controller) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, invalid("volume ID is required")
	}
	root, err := chain.ParseRef(req.GetVolumeId())
	if err != nil {
		return &csi.DeleteVolumeResponse{}, nil // no volume was ever made under a malformed handle
	}
	r, err := c.begin(root.String(), req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	defer r.release()
	resolution, err := r.resolve(ctx, root)
	if errors.Is(err, ErrNoVolume) {
		return &csi.DeleteVolumeResponse{}, nil
	}
	if err != nil {
		return nil, toStatus(err)
	}
	// A chain of one member: the volume itself. A longer chain is replicated
	// and refused by its cluster (ErrReplicated): cleaning up one site never
	// destroys the other's data.
	end := resolution.End()
	api, err := r.set.Cluster(end.Ref.Cluster)
	if err != nil {
		return nil, toStatus(err)
	}
	if err := api.DeleteVolume(ctx, end.Ref); err != nil && !errors.Is(err, core.ErrNotFound) {
		return nil, toStatus(err)
	}
	return &csi.DeleteVolumeResponse{}, nil
}

func (c *Controller) ControllerExpandVolume(ctx context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	if req.GetCapacityRange() == nil {
		return nil, invalid("capacity range is required")
	}
	size, err := sizeOf(req.GetCapacityRange(), 0)
	if err != nil || size == 0 {
		return nil, cmp.Or(err, invalid("capacity range asks for no size"))
	}
	root, err := parseHandle(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	r, err := c.begin(root.String(), req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	defer r.release()
	end, api, err := r.activeEnd(ctx, root.String(), "volume")
	if err != nil {
		return nil, toStatus(err)
	}
	v, err := api.Volume(ctx, end)
	if err != nil {
		return nil, toStatus(err)
	}
	if v.SizeBytes < size {
		if v, err = api.ExpandVolume(ctx, end, size); err != nil {
			return nil, toStatus(err)
		}
	}
	return &csi.ControllerExpandVolumeResponse{CapacityBytes: int64(v.SizeBytes), NodeExpansionRequired: v.VolumeMode == core.Filesystem}, nil
}

func (c *Controller) ValidateVolumeCapabilities(ctx context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, invalid("volume capabilities are required")
	}
	root, err := parseHandle(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	r, err := c.begin("", req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	resolution, err := r.resolve(ctx, root)
	if err != nil {
		return nil, toStatus(err)
	}
	end := resolution.End()
	mode := core.VolumeMode("")
	if api, err := r.set.Cluster(end.Ref.Cluster); err == nil && end.State != chain.Unknown {
		if v, err := api.Volume(ctx, end.Ref); err == nil {
			mode = v.VolumeMode
		}
	}
	asked, _, err := modeOf(req.GetVolumeCapabilities())
	if err != nil {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: status.Convert(err).Message()}, nil
	}
	if mode != "" && asked != mode {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: fmt.Sprintf("volume %s is a %s volume", root, mode)}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext: req.GetVolumeContext(), VolumeCapabilities: req.GetVolumeCapabilities(), Parameters: req.GetParameters()}}, nil
}

func (c *Controller) GetCapacity(ctx context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	capabilities := req.GetVolumeCapabilities()
	if len(capabilities) == 0 { // any volume: the shape's placeCount is what matters
		capabilities = []*csi.VolumeCapability{{AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}}
	}
	shape, err := shapeOf(nil, capabilities, req.GetParameters())
	if err != nil {
		return nil, err
	}
	r, err := c.begin("", nil)
	if err != nil {
		return nil, toStatus(err)
	}
	id, err := creatingCluster(r.set, req.GetParameters()[ParameterCluster])
	if err != nil {
		return nil, err
	}
	api, err := r.set.Cluster(id)
	if err != nil {
		return nil, toStatus(err)
	}
	free, err := api.Capacity(ctx, shape.PlaceCount)
	if err != nil {
		return nil, toStatus(err)
	}
	return &csi.GetCapacityResponse{AvailableCapacity: int64(min(free, 1<<62))}, nil
}

func (c *Controller) CreateSnapshot(ctx context.Context, req *csi.CreateSnapshotRequest) (*csi.CreateSnapshotResponse, error) {
	if req.GetName() == "" {
		return nil, invalid("name is required")
	}
	root, err := parseHandle(req.GetSourceVolumeId())
	if err != nil {
		return nil, err
	}
	r, err := c.begin(root.String(), req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	defer r.release()
	end, api, err := r.activeEnd(ctx, root.String(), "source volume")
	if err != nil {
		return nil, toStatus(err)
	}
	s, err := api.CreateSnapshot(ctx, end, req.GetName())
	if err != nil {
		return nil, toStatus(err)
	}
	return &csi.CreateSnapshotResponse{Snapshot: snapshotOf(s)}, nil
}

func snapshotOf(s core.Snapshot) *csi.Snapshot {
	return &csi.Snapshot{SnapshotId: s.Ref.String(), SourceVolumeId: s.Root.String(), SizeBytes: int64(s.SizeBytes),
		CreationTime: timestamppb.New(s.CreatedAt), ReadyToUse: s.Ready}
}

func (c *Controller) DeleteSnapshot(ctx context.Context, req *csi.DeleteSnapshotRequest) (*csi.DeleteSnapshotResponse, error) {
	if req.GetSnapshotId() == "" {
		return nil, invalid("snapshot ID is required")
	}
	ref, err := core.ParseSnapshotRef(req.GetSnapshotId())
	if err != nil {
		return &csi.DeleteSnapshotResponse{}, nil // no snapshot was ever made under a malformed ID
	}
	r, err := c.begin("snapshot/"+ref.String(), req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	defer r.release()
	api, err := r.set.Cluster(ref.Member.Cluster)
	if errors.Is(err, ErrUnknownCluster) {
		return &csi.DeleteSnapshotResponse{}, nil
	}
	if err := api.DeleteSnapshot(ctx, ref); err != nil && !errors.Is(err, core.ErrNotFound) {
		return nil, toStatus(err)
	}
	return &csi.DeleteSnapshotResponse{}, nil
}

func (c *Controller) ListSnapshots(ctx context.Context, req *csi.ListSnapshotsRequest) (*csi.ListSnapshotsResponse, error) {
	start := 0
	if token := req.GetStartingToken(); token != "" {
		n, err := strconv.Atoi(token)
		if err != nil || n < 0 {
			return nil, status.Errorf(codes.Aborted, "starting token %q is not one this driver gave", clipString(token))
		}
		start = n
	}
	if req.GetMaxEntries() < 0 {
		return nil, invalid("max_entries must not be negative")
	}
	r, err := c.begin("", req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	all, err := listSnapshots(ctx, r.set)
	if err != nil {
		return nil, toStatus(err)
	}
	all = slices.DeleteFunc(all, func(s core.Snapshot) bool {
		return (req.GetSnapshotId() != "" && s.Ref.String() != req.GetSnapshotId()) ||
			(req.GetSourceVolumeId() != "" && s.Root.String() != req.GetSourceVolumeId())
	})
	if start > len(all) {
		return nil, status.Errorf(codes.Aborted, "starting token %d is past the %d snapshots", start, len(all))
	}
	end := len(all)
	if n := int(req.GetMaxEntries()); n > 0 && start+n < end {
		end = start + n
	}
	out := &csi.ListSnapshotsResponse{}
	for _, s := range all[start:end] {
		out.Entries = append(out.Entries, &csi.ListSnapshotsResponse_Entry{Snapshot: snapshotOf(s)})
	}
	if end < len(all) {
		out.NextToken = strconv.Itoa(end)
	}
	return out, nil
}

// listSnapshots gathers the snapshots of every reachable cluster, sorted by ID.
func listSnapshots(ctx context.Context, set *Set) ([]core.Snapshot, error) {
	var all []core.Snapshot
	for _, id := range set.IDs() {
		api, err := set.Cluster(id)
		if err != nil {
			return nil, err
		}
		snaps, err := api.ListSnapshots(ctx)
		if errors.Is(err, chain.ErrUnreachable) {
			continue
		}
		if err != nil {
			return nil, err
		}
		all = append(all, snaps...)
	}
	slices.SortFunc(all, func(a, b core.Snapshot) int { return cmp.Compare(a.Ref.String(), b.Ref.String()) })
	return all, nil
}

func clipString(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
