package local_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"

	"github.com/baton-dr/baton/bed/local"
	"github.com/baton-dr/baton/csi/csisanity"
)

// TestSanityOnTheLocalBed runs the strict csi-sanity (csisanity: made-up
// IDs, 1 GiB volumes, idempotent calls repeated 20 times) against site-a's
// driver as a new user meets it: the real baton-csi over the site's real
// operator on its own API server, and the real node agent making its
// devices (loop devices over btrfs) on its own passes, not on the test's.
// Every spec must pass: that is issue 36's bar.
//
// It runs only with BATON_LOCALBED_SANITY=1 (make localbed-sanity): it takes
// 4-6 minutes, and one run in seven still fails NodeExpandVolume after
// NodePublish (resize2fs runs before the node agent's pass has the loop
// device's new size), which must not make CI's verdict a matter of luck.
func TestSanityOnTheLocalBed(t *testing.T) {
	if os.Getenv("BATON_LOCALBED_SANITY") != "1" {
		t.Skip("strict csi-sanity on the local bed: set BATON_LOCALBED_SANITY=1 (make localbed-sanity)")
	}
	needs(t)
	if csisanity.InOwnProcess(t) {
		return
	}
	b, dir, log := startBed(t)
	site := local.SiteNames[0]
	t.Cleanup(func() {
		if t.Failed() {
			driverLog, _ := os.ReadFile(filepath.Join(b.Dir(), site, "baton-csi.log"))
			t.Logf("the bed's log:\n%s\n%s's baton-csi log:\n%s", log.String(), site, driverLog)
		}
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	endpoint, err := b.CSIEndpoint(site)
	if err != nil {
		t.Fatal(err)
	}
	// Under the bed's directory: Close unmounts whatever sanity leaves there.
	sanity.Test(t, csisanity.Config(endpoint, filepath.Join(dir, "sanity")))
}
