package drbd

import (
	"fmt"
	"regexp"

	"github.com/baton-dr/baton/storage/backend"
)

// SharedKernel names a node's DRBD objects apart from those of the other
// nodes that share its kernel: kind's nodes are containers on one host, and
// DRBD's resource names and minors are the kernel's, while the core gives a
// volume's resource one name and one minor on every node of a site (its
// allocation, right for nodes with kernels of their own). With a Suffix the
// node's kernel resource is `<resource>-<suffix>` and its minor
// `minor + MinorOffset`; everything read back from the kernel is mapped to
// the core's name and minor again. The zero value is a kernel of the node's
// own: names and minors go to DRBD as the core gave them.
//
// Two settings rather than one derived from the other: the suffix must be
// unique among the kernel's nodes (a node name is), and so must the minor
// ranges, which only whoever lays out the nodes knows (the chart, from the
// site's minor range and the node's index); a minor hashed from the name
// could collide. The peers need not agree on either: DRBD's handshake
// (P_CONNECTION_FEATURES, P_PROTOCOL) carries protocol versions, features
// and options, never the resource's name or minor, and the kernel matches
// an incoming connection to its resource by the pair of addresses
// (conn_get_by_addrs in drbd_main.c), so `r-a` on one node connects to
// `r-b` on the other.
type SharedKernel struct {
	// Suffix is appended to every resource name, after a "-"; empty for a
	// kernel of the node's own.
	Suffix string
	// MinorOffset is added to every minor; it needs a Suffix.
	MinorOffset uint32
}

// Limits of the kernel's names and minors. DRBD takes a resource name of up
// to 127 bytes (drbd_cfg_context's ctx_resource_name is a 128-byte string
// with its NUL, drbd_genl.h); a device minor is the block layer's, at most
// MINORMASK.
const (
	maxKernelName  = 127
	maxKernelMinor = 1<<20 - 1
	// maxSuffix leaves the core's names room: the suffix of a node name
	// longer than this is refused rather than cut (cut names could collide).
	maxSuffix = 63
)

// suffixName is what a suffix may be: a word safeName takes after a "-",
// without the ":" DRBD 9 reads as a connection's separator.
var suffixName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// Check refuses a suffix that would not survive a resource file, or an
// offset without one (the minors would move while the names collide).
func (k SharedKernel) Check() error {
	switch {
	case k.Suffix == "" && k.MinorOffset != 0:
		return fmt.Errorf("drbd: a minor offset (%d) needs a resource-name suffix: nodes sharing a kernel need both apart", k.MinorOffset)
	case k.Suffix == "":
		return nil
	case len(k.Suffix) > maxSuffix:
		return fmt.Errorf("drbd: resource-name suffix %q is %d characters; at most %d leave room for the resource's name in DRBD's %d",
			k.Suffix, len(k.Suffix), maxSuffix, maxKernelName)
	case !suffixName.MatchString(k.Suffix):
		return fmt.Errorf("drbd: resource-name suffix %q: want letters, digits, '_', '.' and '-', starting with a letter or digit", k.Suffix)
	case k.MinorOffset > maxKernelMinor:
		return fmt.Errorf("drbd: minor offset %d is beyond the kernel's last minor %d", k.MinorOffset, maxKernelMinor)
	}
	return nil
}

// kernelName is the kernel's name of a core resource.
func (r *Replicator) kernelName(resource string) (string, error) {
	k := r.options.SharedKernel
	if k.Suffix == "" {
		return resource, nil
	}
	name := resource + "-" + k.Suffix
	if len(name) > maxKernelName {
		return "", backend.Refusal(backend.ErrInvalid, "drbdadm",
			"%s: with this node's suffix %q the kernel's resource name is %d characters; DRBD takes at most %d",
			resource, k.Suffix, len(name), maxKernelName)
	}
	return name, nil
}

// kernelConfig is a core configuration in the kernel's names: the resource
// and the minor. Nodes, addresses and volumes are the node's own already.
func (r *Replicator) kernelConfig(config backend.ResourceConfig) (backend.ResourceConfig, error) {
	if r.options.SharedKernel.Suffix == "" {
		return config, nil
	}
	name, err := r.kernelName(config.Name)
	if err != nil {
		return backend.ResourceConfig{}, err
	}
	offset := r.options.SharedKernel.MinorOffset
	if uint64(config.Minor)+uint64(offset) > maxKernelMinor {
		return backend.ResourceConfig{}, backend.Refusal(backend.ErrInvalid, "drbdadm",
			"%s: minor %d with this node's offset %d is beyond the kernel's last minor %d", config.Name, config.Minor, offset, maxKernelMinor)
	}
	config.Name = name
	config.Minor += offset
	return config, nil
}

// ownConfig is a core configuration in the kernel's names, checked for this
// node (checkConfig), and this node's own entry in it.
func (r *Replicator) ownConfig(config backend.ResourceConfig) (backend.ResourceConfig, backend.ResourceNode, error) {
	config, err := r.kernelConfig(config)
	if err != nil {
		return backend.ResourceConfig{}, backend.ResourceNode{}, err
	}
	self, err := checkConfig(config, r.options.Node, r.version)
	return config, self, err
}

// coreMinor maps a minor the kernel runs back to the core's.
func (r *Replicator) coreMinor(resource string, minor uint32) (uint32, error) {
	offset := r.options.SharedKernel.MinorOffset
	if minor < offset {
		return 0, fmt.Errorf("drbd: %s runs minor %d, below this node's offset %d: another node's minor, or one set up behind baton's back",
			resource, minor, offset)
	}
	return minor - offset, nil
}
