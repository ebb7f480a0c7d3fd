package infra

import (
	"context"
	"errors"
	"fmt"
	osexec "os/exec"
	"slices"
	"strings"
	"time"

	"github.com/baton-dr/baton/node/exec"
)

// kernelStorage releases what zfs-drbd mode leaves in the host's kernel once
// the kind nodes are gone: DRBD resources and ZFS pools are the kernel's,
// not a container's, so deleting the nodes leaves the resources up and the
// pools imported (holding their files open). The bed's are those of its
// storage nodes: DRBD resources named with a node's suffix
// (`<resource>-<node>`, node/drbd.SharedKernel) and pools named after a
// node. Nothing else of the host's is touched.
type kernelStorage struct {
	cmder exec.Cmder
	// lookPath finds a tool; an absent one means the host runs none of its
	// objects (os/exec.LookPath on the host).
	lookPath func(tool string) (string, error)
	nodes    []string // the bed's storage nodes, every site's
}

// kernelStorageTimeout bounds each command: drbdsetup down waits for the
// peer's acknowledgement only as long as DRBD's own timeouts.
const kernelStorageTimeout = time.Minute

func newKernelStorage() kernelStorage {
	var nodes []string
	for _, c := range Sites() {
		nodes = append(nodes, StorageZFSDRBD.StorageNodes(c)...)
	}
	return kernelStorage{cmder: exec.Local{}, lookPath: osexec.LookPath, nodes: nodes}
}

func (k kernelStorage) output(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), kernelStorageTimeout)
	defer cancel()
	out, err := exec.Output(k.cmder.Command(ctx, name, args...))
	return string(out), err
}

// release takes the bed's DRBD resources down, then exports its pools (a
// pool whose zvols DRBD holds is busy), and says what it did. An absent
// tool, or a kernel without the module (the tool's listing fails), holds
// none of them.
func (k kernelStorage) release() (string, error) {
	drbd, err := k.releaseDRBD()
	pools, poolErr := k.exportPools()
	return drbd + "; " + pools, errors.Join(err, poolErr)
}

// releaseDRBD runs `drbdsetup down` for every resource `drbdsetup status`
// lists whose name ends in one of the bed's suffixes. status prints each
// resource's name first on a line of its own indentation (0), in DRBD 8.4's
// drbd-utils 9 and DRBD 9's alike.
func (k kernelStorage) releaseDRBD() (string, error) {
	if _, err := k.lookPath("drbdsetup"); err != nil {
		return "no drbdsetup on the host: no DRBD resource to take down", nil
	}
	out, err := k.output("drbdsetup", "status")
	if err != nil {
		return fmt.Sprintf("no DRBD resources listed (%v)", err), nil
	}
	var ours []string
	for _, line := range strings.Split(out, "\n") {
		if line == "" || line[0] == ' ' || line[0] == '\t' {
			continue
		}
		if name := strings.Fields(line)[0]; k.bedsResource(name) {
			ours = append(ours, name)
		}
	}
	down, err := k.runOnEach("drbdsetup", "down", ours)
	if len(down) == 0 {
		return "none of the bed's DRBD resources up", err
	}
	return fmt.Sprintf("DRBD resources down: %s", strings.Join(down, ", ")), err
}

// bedsResource: the name carries a storage node's suffix.
func (k kernelStorage) bedsResource(name string) bool {
	for _, node := range k.nodes {
		if base, ok := strings.CutSuffix(name, "-"+node); ok && base != "" {
			return true
		}
	}
	return false
}

// exportPools runs `zpool export` for every imported pool named after one
// of the bed's storage nodes.
func (k kernelStorage) exportPools() (string, error) {
	if _, err := k.lookPath("zpool"); err != nil {
		return "no zpool on the host: no pool to export", nil
	}
	out, err := k.output("zpool", "list", "-H", "-o", "name")
	if err != nil {
		return fmt.Sprintf("no pools listed (%v)", err), nil
	}
	ours := slices.DeleteFunc(strings.Fields(out), func(name string) bool { return !slices.Contains(k.nodes, name) })
	exported, err := k.runOnEach("zpool", "export", ours)
	if len(exported) == 0 {
		return "none of the bed's pools imported", err
	}
	return "pools exported: " + strings.Join(exported, ", "), err
}

// runOnEach runs `tool verb name` for each name in turn, and returns the
// names it succeeded for and every failure.
func (k kernelStorage) runOnEach(tool, verb string, names []string) ([]string, error) {
	var done []string
	var errs []error
	for _, name := range names {
		if _, err := k.output(tool, verb, name); err != nil {
			errs = append(errs, fmt.Errorf("%s %s %s: %w", tool, verb, name, err))
			continue
		}
		done = append(done, name)
	}
	return done, errors.Join(errs...)
}
