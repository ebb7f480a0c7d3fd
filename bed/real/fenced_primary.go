package real

import (
	"fmt"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/storage/chain"
)

// checkPrimariesWritable holds bed.FencedPrimary on every running
// application's volumes at every look at the records.
//
// The application itself does not show such a fence on this bed. The node
// agent fences a member with its loop device's read-only flag (BLKROSET),
// which the kernel checks on writes to the device node but not on the bios
// of the file system mounted on it: it warns once ("Trying to write to
// read-only block-device loopN") and lets them through, so ext4 and MariaDB
// go on acknowledging writes (this host's 6.18 kernel: an fsync under a
// mounted ext4 succeeds after `blockdev --setro`). The sites' records are
// where the fence shows.
func (b *Bed) checkPrimariesWritable(records map[chain.Ref][]chain.Member) {
	for _, name := range b.appOrder {
		a := b.apps[name]
		if a.site == "" {
			continue
		}
		s, err := b.site(a.site)
		if err != nil {
			continue
		}
		for _, v := range a.volumes {
			root, err := chain.ParseRef(v.handle)
			if err != nil {
				continue
			}
			member, fenced := bed.FencedPrimary(records[root], s.ID)
			key := "fenced primary " + member.Ref.String()
			if !fenced || !b.FirstReport(key) {
				continue
			}
			b.violate(bed.InvariantFencedPrimary, fmt.Sprintf("%s writes %s on %s, whose member %s there is %s",
				name, v.name, a.site, member.Ref, member.State))
		}
	}
}
