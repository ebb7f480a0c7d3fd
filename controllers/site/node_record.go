package site

import (
	"fmt"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/core"
)

// renderNode writes a node's record onto its StorageNode. The node's identity
// (cluster, Kubernetes node, DRBD address, devices) is the deployment flow's;
// the record owns the pool's provisioning, the cordon and what the agent
// reported.
func renderNode(o *v1.StorageNode, n core.Node) error {
	if current, err := provisioningOf(o.Spec.Provisioning); err != nil || current != n.Provisioning {
		name, err := provisionings.name(n.Provisioning)
		if err != nil {
			return err
		}
		o.Spec.Provisioning = name
	}
	o.Spec.Unschedulable = !n.Schedulable
	var err error
	usage := &o.Status.Pool
	if usage.SizeBytes, err = toInt64("pool sizeBytes", n.Usage.SizeBytes); err != nil {
		return err
	}
	if usage.AllocatedBytes, err = toInt64("pool allocatedBytes", n.Usage.AllocatedBytes); err != nil {
		return err
	}
	if usage.FreeBytes, err = toInt64("pool freeBytes", n.Usage.FreeBytes); err != nil {
		return err
	}
	o.Status.AgentAddress = n.Address
	o.Status.ReportedAt = v1.NewTimestamp(n.ReportedAt)
	o.Status.Fenced = n.Fenced
	return nil
}

// nodeRecord reads a node's record back from its StorageNode.
func nodeRecord(o *v1.StorageNode) (core.Node, error) {
	provisioning, err := provisioningOf(o.Spec.Provisioning)
	if err != nil {
		return core.Node{}, fmt.Errorf("storage node %s: %w", o.Name, err)
	}
	reported, err := o.Status.ReportedAt.Time()
	if err != nil {
		return core.Node{}, fmt.Errorf("storage node %s: %w", o.Name, err)
	}
	pool := o.Status.Pool
	if pool.SizeBytes < 0 || pool.AllocatedBytes < 0 || pool.FreeBytes < 0 {
		return core.Node{}, fmt.Errorf("storage node %s: negative pool usage %+v", o.Name, pool)
	}
	return core.Node{
		Name: o.Name, Address: o.Status.AgentAddress, Provisioning: provisioning, Schedulable: !o.Spec.Unschedulable,
		Usage: backend.Usage{SizeBytes: uint64(pool.SizeBytes), AllocatedBytes: uint64(pool.AllocatedBytes),
			FreeBytes: uint64(pool.FreeBytes)},
		ReportedAt: reported, Fenced: o.Status.Fenced,
	}, nil
}
