package v1alpha1_test

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

// The identities of the fixtures: two sites' clusters and the members of one
// chain, A:v1 (root) -> B:v2 (the fail-over clone) -> A:v3.
const (
	clusterA = "0a0a0a0a-0000-4000-8000-00000000000a"
	clusterB = "0b0b0b0b-0000-4000-8000-00000000000b"
	volume1  = "11111111-1111-4111-8111-111111111111"
	volume2  = "22222222-2222-4222-8222-222222222222"
	volume3  = "33333333-3333-4333-8333-333333333333"

	handleA1 = clusterA + ":" + volume1
	handleB2 = clusterB + ":" + volume2
	handleA3 = clusterA + ":" + volume3

	gibibyte = int64(1) << 30
)

// fixtureTime is a fixed instant with whole seconds, as metav1.Time stores it.
var fixtureTime = metav1.NewTime(time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC))

// recordTime is an instant with nanoseconds, as the records' Timestamps keep it.
var recordTime = v1.NewTimestamp(time.Date(2026, 10, 3, 12, 0, 0, 123456789, time.UTC))

func int32Pointer(v int32) *int32 { return &v }

func condition(conditionType, reason string) metav1.Condition {
	return metav1.Condition{
		Type: conditionType, Status: metav1.ConditionTrue, Reason: reason,
		Message: "fixture", LastTransitionTime: fixtureTime, ObservedGeneration: 1,
	}
}

func layout() v1.StorageLayout {
	return v1.StorageLayout{
		Pool:                v1.PoolLayout{Name: "baton", Provisioning: v1.ProvisioningThin, Backend: v1.BackendZFSDRBD},
		PlaceCount:          2,
		DRBDPorts:           v1.PortRange{Min: 7000, Max: 7999},
		DRBDMinors:          v1.MinorRange{Min: 1000, Max: 49999},
		ReplicationInterval: metav1.Duration{Duration: 5 * time.Minute},
		SnapshotRetention:   3,
	}
}

// fixture is one kind with a valid object, a valid status for it, and a valid
// change of each half (for the status-subresource test).
type fixture struct {
	kind string
	// object returns a valid object with an empty status; every defaulted field
	// is set, so that what is sent is what is read back.
	object func() client.Object
	// setStatus fills a valid status.
	setStatus func(client.Object)
	// changeSpec makes a valid spec change; nil when the spec is immutable.
	changeSpec func(client.Object)
	// changeStatus makes a valid status change.
	changeStatus func(client.Object)
}

func fixtures() []fixture {
	return []fixture{
		{
			kind: "StorageCluster",
			object: func() client.Object {
				return &v1.StorageCluster{Spec: v1.StorageClusterSpec{
					ClusterID:     clusterA,
					StorageLayout: layout(),
					Peers:         []v1.PeerCluster{{ID: clusterB, Endpoint: "https://site-b.example:8443"}},
				}}
			},
			setStatus: func(o client.Object) {
				o.(*v1.StorageCluster).Status = v1.StorageClusterStatus{
					ObservedGeneration: 1, Phase: v1.StorageClusterReady, NodeCount: 3, ReadyNodeCount: 3,
					Capacity:   v1.PoolUsage{SizeBytes: 300 * gibibyte, AllocatedBytes: 10 * gibibyte, FreeBytes: 290 * gibibyte},
					Conditions: []metav1.Condition{condition(v1.StorageClusterReadyCondition, v1.StorageClusterReadyReason)},
				}
			},
			changeSpec:   func(o client.Object) { o.(*v1.StorageCluster).Spec.PlaceCount = 3 },
			changeStatus: func(o client.Object) { o.(*v1.StorageCluster).Status.Phase = v1.StorageClusterDegraded },
		},
		{
			kind: "StorageNode",
			object: func() client.Object {
				return &v1.StorageNode{Spec: v1.StorageNodeSpec{
					Cluster: "site-a", NodeName: "node-1", Address: "10.0.0.11", Provisioning: v1.ProvisioningThick,
					Devices: []v1.PoolDevice{
						{Path: "/dev/sdb", Type: v1.DeviceTypeDisk},
						{Path: "/var/lib/baton/pool0.img", Type: v1.DeviceTypeLoopFile, SizeBytes: 10 * gibibyte},
					},
				}}
			},
			setStatus: func(o client.Object) {
				o.(*v1.StorageNode).Status = v1.StorageNodeStatus{
					ObservedGeneration: 1, Role: v1.NodeRoleStorage, Reachable: true,
					Pool: v1.PoolUsage{SizeBytes: 100 * gibibyte, AllocatedBytes: gibibyte, FreeBytes: 99 * gibibyte},
					Resources: []v1.NodeResource{{
						Name: "pvc-1", Volume: handleA1, DRBDPort: int32Pointer(7000), DRBDMinor: int32Pointer(1000),
						NodeID: int32Pointer(0), DiskState: v1.DiskStateUpToDate,
					}},
					Conditions:   []metav1.Condition{condition(v1.StorageNodeReadyCondition, v1.StorageNodeReadyReason)},
					AgentAddress: "10.0.0.11:7900", ReportedAt: recordTime,
				}
			},
			changeSpec:   func(o client.Object) { o.(*v1.StorageNode).Spec.Address = "fd00::11" },
			changeStatus: func(o client.Object) { o.(*v1.StorageNode).Status.Reachable = false },
		},
		{
			kind: "Volume",
			object: func() client.Object {
				// B:v2, the fail-over clone of the root A:v1: a VM disk.
				return &v1.Volume{Spec: v1.VolumeSpec{
					VolumeID: volume2, SizeBytes: 10 * gibibyte, PlaceCount: 2,
					Provisioning: v1.ProvisioningThin, VolumeMode: corev1.PersistentVolumeBlock,
					RootHandle: handleA1, Generation: 1, Predecessor: handleA1,
					OriginSnapshot: &v1.OriginSnapshot{Volume: handleA1, Dataset: "rep-" + volume1,
						SnapshotRef: v1.SnapshotRef{Name: "baton-1", GUID: "8817239847123"}},
				}}
			},
			setStatus: func(o client.Object) {
				o.(*v1.Volume).Status = v1.VolumeStatus{
					ObservedGeneration: 1, State: v1.VolumeActive,
					Replicas: []v1.VolumeReplica{
						{Node: "node-1", NodeID: 0, DiskState: v1.DiskStateUpToDate},
						{Node: "node-2", NodeID: 1, DiskState: v1.DiskStateUpToDate},
					},
					DRBDPort: int32Pointer(7000), DRBDMinor: int32Pointer(1000), Initialized: true, FSType: "xfs",
					Conditions: []metav1.Condition{condition(v1.VolumeReadyCondition, v1.VolumeReadyReason)},
					VolumeRecord: v1.VolumeRecord{
						DRBDResource: "vol-" + volume2, Primary: "node-1", Home: "node-1",
						PresentNodes: []string{"node-1", "node-2"}, CreatedAt: recordTime, SuccessorAnnounced: true,
						Snapshots: []v1.SnapshotRef{{Name: "baton-000002", GUID: "9"}},
						UserSnapshots: []v1.UserSnapshot{{SnapshotID: volume3, Member: handleA3, CSIName: "snapshot-1",
							Root: handleA1, SizeBytes: 1 << 30, CreatedAt: recordTime}},
					},
				}
			},
			changeSpec: func(o client.Object) { o.(*v1.Volume).Spec.SizeBytes = 20 * gibibyte },
			changeStatus: func(o client.Object) {
				o.(*v1.Volume).Status.State = v1.VolumeDemoted
				o.(*v1.Volume).Status.Successor = handleA3
			},
		},
		{
			kind: "Replica",
			object: func() client.Object {
				// A's replica of B:v2.
				return &v1.Replica{Spec: v1.ReplicaSpec{
					Source: handleB2, RootHandle: handleA1, SourceGeneration: 1,
					SizeBytes: 10 * gibibyte, PlaceCount: 2, Provisioning: v1.ProvisioningThin,
					VolumeMode: corev1.PersistentVolumeBlock, Nodes: []string{"node-1", "node-2"},
				}}
			},
			setStatus: func(o client.Object) {
				o.(*v1.Replica).Status = v1.ReplicaStatus{
					Received: []v1.ReceivedSnapshots{
						{Node: "node-1", Snapshots: []v1.SnapshotRef{{Name: "baton-1", GUID: "1"}}},
						{Node: "node-2"},
					},
					CreatedAt:  recordTime,
					Conditions: []metav1.Condition{condition(v1.ReplicaReceivedCondition, v1.ReplicaWaitingReason)},
				}
			},
			changeSpec:   func(o client.Object) { o.(*v1.Replica).Spec.Nodes = []string{"node-1"} },
			changeStatus: func(o client.Object) { o.(*v1.Replica).Status.ClonedInto = handleA3 },
		},
		{
			kind: "Snapshot",
			object: func() client.Object {
				return &v1.Snapshot{Spec: v1.SnapshotSpec{Volume: handleA1, SnapshotName: "baton-1"}}
			},
			setStatus: func(o client.Object) {
				o.(*v1.Snapshot).Status = v1.SnapshotStatus{
					GUID: "8817239847123", CreatedAt: &fixtureTime, SizeBytes: 10 * gibibyte, ReadyToUse: true,
					Conditions: []metav1.Condition{condition(v1.SnapshotReadyCondition, v1.SnapshotReadyReason)},
				}
			},
			changeStatus: func(o client.Object) { o.(*v1.Snapshot).Status.ReadyToUse = false },
		},
		{
			kind: "Replication",
			object: func() client.Object {
				return &v1.Replication{Spec: v1.ReplicationSpec{
					SourceVolume: handleA1, TargetCluster: clusterB,
					Interval: metav1.Duration{Duration: 5 * time.Minute}, Retention: 3, Enabled: true,
				}}
			},
			setStatus: func(o client.Object) {
				o.(*v1.Replication).Status = v1.ReplicationStatus{
					ObservedGeneration: 1, Phase: v1.ReplicationInSync,
					LastSyncTime: &fixtureTime, LastSyncDuration: &metav1.Duration{Duration: 12 * time.Second},
					LastSyncBytes:  1 << 20,
					LastSnapshot:   &v1.SnapshotRef{Name: "baton-2", GUID: "2"},
					CommonSnapshot: &v1.SnapshotRef{Name: "baton-2", GUID: "2"},
					Conditions:     []metav1.Condition{condition(v1.ReplicationInSyncCondition, v1.ReplicationInSyncReason)},
					Cycle: &v1.ReplicationCycle{
						Phase: v1.CycleIdle, Sequence: 2,
						Snapshots: []v1.CycleSnapshot{
							{SnapshotRef: v1.SnapshotRef{Name: "baton-1", GUID: "1"}, TakenAt: recordTime, ShippedAt: recordTime},
							{SnapshotRef: v1.SnapshotRef{Name: "baton-2", GUID: "2"}, TakenAt: recordTime, ShippedAt: recordTime},
						},
						Base: v1.CycleBase{Snapshot: "baton-2", GUID: "2"}, Due: recordTime, RetryAt: recordTime,
						LastSync:  v1.CycleSync{At: recordTime, Duration: metav1.Duration{Duration: 12*time.Second + 7}, Bytes: 1 << 20, Snapshot: "baton-2"},
						Receivers: []v1.CycleReceiver{{Node: "node-b1", Address: "10.0.1.11:7900"}},
						ReaimedAt: recordTime,
					},
				}
			},
			changeSpec:   func(o client.Object) { o.(*v1.Replication).Spec.FailbackSource = clusterB },
			changeStatus: func(o client.Object) { o.(*v1.Replication).Status.Phase = v1.ReplicationSyncing },
		},
		{
			kind: "OperatorOps",
			object: func() client.Object {
				return &v1.OperatorOps{Spec: v1.OperatorOpsSpec{
					NodeSelector: map[string]string{"storage.baton.dev/candidate": "true"},
					NodeNames:    []string{"node-1", "node-2"},
					Devices:      v1.DeviceFilter{Paths: []string{"/dev/sd*"}, MinSizeBytes: gibibyte, AllowLoopFiles: true},
				}}
			},
			setStatus: func(o client.Object) {
				o.(*v1.OperatorOps).Status = v1.OperatorOpsStatus{
					Phase: v1.OperatorOpsCompleted, Draft: "site-a",
					Nodes: []v1.DiscoveredNode{{Name: "node-1", Address: "10.0.0.11", Devices: []v1.CandidateDevice{
						{Path: "/dev/sdb", Type: v1.DeviceTypeDisk, SizeBytes: 100 * gibibyte, Model: "QEMU HARDDISK"},
					}}},
					Conditions: []metav1.Condition{condition(v1.OperatorOpsDiscoveredCondition, v1.OperatorOpsDiscoveredReason)},
				}
			},
			changeStatus: func(o client.Object) { o.(*v1.OperatorOps).Status.Phase = v1.OperatorOpsFailed },
		},
		{
			kind: "ClusterDeploymentConfig",
			object: func() client.Object {
				return &v1.ClusterDeploymentConfig{Spec: v1.ClusterDeploymentConfigSpec{
					NodeSets: []v1.NodeSet{{Name: "storage", Nodes: []string{"node-1", "node-2", "node-3"}, Devices: []string{"/dev/sdb"}}},
					Sizing:   &v1.Sizing{ClusterName: "site-a", StorageLayout: layout()},
				}}
			},
			setStatus: func(o client.Object) {
				o.(*v1.ClusterDeploymentConfig).Status = v1.ClusterDeploymentConfigStatus{
					ObservedGeneration: 1, Phase: v1.ClusterDeploymentConfigDeployed,
					Cluster:    &v1.DeployedCluster{Name: "site-a", ClusterID: clusterA, Pool: "baton", Nodes: []string{"node-1", "node-2", "node-3"}},
					Conditions: []metav1.Condition{condition(v1.ClusterDeploymentConfigDeployedCondition, v1.ClusterDeploymentConfigDeployedReason)},
				}
			},
			changeSpec: func(o client.Object) { o.(*v1.ClusterDeploymentConfig).Spec.Sizing.PlaceCount = 3 },
			changeStatus: func(o client.Object) {
				o.(*v1.ClusterDeploymentConfig).Status.Phase = v1.ClusterDeploymentConfigFailed
				o.(*v1.ClusterDeploymentConfig).Status.Reason = "node-2 has no /dev/sdb"
			},
		},
		{
			kind: "TestFailover",
			object: func() client.Object {
				return &v1.TestFailover{Spec: v1.TestFailoverSpec{
					Source: "pvc-5d2c7a4e", TargetNamespace: "drill", PVCName: "vm-disk-bubble",
				}}
			},
			setStatus: func(o client.Object) {
				o.(*v1.TestFailover).Status = v1.TestFailoverStatus{
					ObservedGeneration: 1, Phase: v1.TestFailoverReady,
					Snapshot:     &v1.SnapshotRef{Name: "baton-2", GUID: "2"},
					BubbleVolume: handleB2, PVName: "baton-drill-vm-disk", PVCName: "vm-disk-bubble",
					SourceVolumeMode: corev1.PersistentVolumeBlock,
					Conditions:       []metav1.Condition{condition(v1.TestFailoverReadyCondition, v1.TestFailoverReadyReason)},
				}
			},
			changeSpec:   func(o client.Object) { o.(*v1.TestFailover).Spec.Snapshot = "baton-1" },
			changeStatus: func(o client.Object) { o.(*v1.TestFailover).Status.Phase = v1.TestFailoverCleaningUp },
		},
		{
			kind: "StorageSiteDeployment",
			object: func() client.Object {
				sized := v1.Sizing{ClusterName: "site-a", StorageLayout: layout()}
				return &v1.StorageSiteDeployment{Spec: v1.StorageSiteDeploymentSpec{
					Site: "site-a", SiteNamespace: v1.DefaultSiteNamespace,
					Discovery: v1.OperatorOpsSpec{
						NodeSelector: map[string]string{"storage.baton.dev/candidate": "true"},
						Devices:      v1.DeviceFilter{Paths: []string{"/dev/sd*"}, AllowLoopFiles: true},
					},
					Sizing: &sized,
				}}
			},
			setStatus: func(o client.Object) {
				o.(*v1.StorageSiteDeployment).Status = v1.StorageSiteDeploymentStatus{
					ObservedGeneration: 1, Phase: v1.StorageSiteDeploymentOnline,
					Work: "baton-site-a-0123456789", Run: "site-a-0123abcd",
					Draft: &v1.DraftProjection{
						Name:     "site-a",
						NodeSets: []v1.NodeSet{{Name: "storage", Nodes: []string{"node-1", "node-2", "node-3"}, Devices: []string{"/dev/sdb"}}},
						Approved: true, SizingApplied: true, Phase: v1.ClusterDeploymentConfigDeployed,
					},
					Cluster:        &v1.DeployedCluster{Name: "site-a", ClusterID: clusterA, Pool: "baton", Nodes: []string{"node-1", "node-2", "node-3"}},
					ReadyNodeCount: 3,
					Conditions:     []metav1.Condition{condition(v1.StorageSiteDeploymentReadyCondition, v1.StorageSiteDeploymentOnlineReason)},
				}
			},
			changeSpec: func(o client.Object) { o.(*v1.StorageSiteDeployment).Spec.Discovery.NodeNames = []string{"node-1"} },
			changeStatus: func(o client.Object) {
				o.(*v1.StorageSiteDeployment).Status.Phase = v1.StorageSiteDeploymentFailed
				o.(*v1.StorageSiteDeployment).Status.Reason = "node-2 has no /dev/sdb"
			},
		},
		{
			kind: "SiteTestFailover",
			object: func() client.Object {
				return &v1.SiteTestFailover{Spec: v1.SiteTestFailoverSpec{
					Site: "site-b", SiteNamespace: v1.DefaultSiteNamespace,
					Drill: v1.TestFailoverSpec{Source: "pvc-5d2c7a4e", TargetNamespace: "drill", PVCName: "vm-disk-bubble"},
				}}
			},
			setStatus: func(o client.Object) {
				o.(*v1.SiteTestFailover).Status = v1.SiteTestFailoverStatus{
					ObservedGeneration: 1, Work: "baton-drill-0123456789",
					Drill: v1.TestFailoverStatus{
						Phase: v1.TestFailoverReady, Snapshot: &v1.SnapshotRef{Name: "baton-2", GUID: "2"},
						BubbleVolume: handleB2, PVName: "baton-drill-vm-disk", PVCName: "vm-disk-bubble",
						SourceVolumeMode: corev1.PersistentVolumeBlock,
					},
					Conditions: []metav1.Condition{condition(v1.SiteTestFailoverReadyCondition, v1.TestFailoverReadyReason)},
				}
			},
			changeSpec:   func(o client.Object) { o.(*v1.SiteTestFailover).Spec.Drill.Snapshot = "baton-1" },
			changeStatus: func(o client.Object) { o.(*v1.SiteTestFailover).Status.Drill.Phase = v1.TestFailoverCleaningUp },
		},
	}
}

func fixtureOf(kind string) fixture {
	for _, f := range fixtures() {
		if f.kind == kind {
			return f
		}
	}
	panic("no fixture for kind " + kind)
}
