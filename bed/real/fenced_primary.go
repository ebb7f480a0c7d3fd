package real

import (
	"fmt"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/storage/chain"
)

// checkPrimariesWritable holds bed.FencedPrimary on the volumes of every
// application of all that runs, at every look at the records.
//
// The application did not show such a fence on this bed: the node agent
// fenced a member with its loop device's read-only flag (BLKROSET) only,
// which the kernel checks on writes to the device node but not on the bios
// of the file system mounted on it (it warns "Trying to write to read-only
// block-device loopN" and lets them through), so ext4 and MariaDB went on
// acknowledging writes. The fence now shuts the file system down as well
// (node/fence), but the sites' records stay where a fence shows first.
func (b *Bed) checkPrimariesWritable(all []*apps.App, records map[chain.Ref][]chain.Member) {
	for _, a := range all {
		if a.Site == "" {
			continue
		}
		s, err := b.site(a.Site)
		if err != nil {
			continue
		}
		for _, v := range a.Volumes {
			root, err := chain.ParseRef(v.Handle)
			if err != nil {
				continue
			}
			member, fenced := bed.FencedPrimary(records[root], s.ID)
			key := "fenced primary " + member.Ref.String()
			if !fenced || !b.FirstReport(key) {
				continue
			}
			b.violate(bed.InvariantFencedPrimary, fmt.Sprintf("%s writes %s on %s, whose member %s there is %s",
				a.Spec.Name, v.Name, a.Site, member.Ref, member.State))
		}
	}
}
