package pooltest

import (
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

var spaceTests = []test{
	{"ThickReservesThinDoesNot", testThickReservesThinDoesNot},
	{"PoolFullRefusesAndChangesNothing", testPoolFullRefusesAndChangesNothing},
}

func testThickReservesThinDoesNot(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	empty := usage(t, pool)
	create(t, pool, "thick", volumeBytes, backend.Thick)
	withThick := usage(t, pool)
	if empty.FreeBytes-withThick.FreeBytes < volumeBytes {
		t.Fatalf("a thick volume of %d bytes took only %d bytes of free space", volumeBytes, empty.FreeBytes-withThick.FreeBytes)
	}
	// Writing a thick volume uses its reservation, not more free space.
	Write(t, pool, "thick", 0, Pattern(160, volumeBytes/2))
	wantFreeAbout(t, pool, withThick, "writing into a thick volume's reservation")

	create(t, pool, "thin", volumeBytes, backend.Thin)
	withThin := usage(t, pool)
	if withThick.FreeBytes-withThin.FreeBytes >= volumeBytes/4 {
		t.Fatalf("a thin volume of %d bytes took %d bytes before any write", volumeBytes, withThick.FreeBytes-withThin.FreeBytes)
	}
	// Growing a thick volume reserves the growth.
	must(t, pool.ResizeVolume("thick", 2*volumeBytes), "grow the thick volume")
	grown := usage(t, pool)
	if withThin.FreeBytes-grown.FreeBytes < volumeBytes {
		t.Fatalf("growing a thick volume by %d bytes took only %d bytes", volumeBytes, withThin.FreeBytes-grown.FreeBytes)
	}
	must(t, pool.DestroyVolume("thick"), "destroy the thick volume")
	// The reservation goes at once; freeing written blocks may lag (zfs frees
	// in the background), so only the reservation's return is pinned.
	if after := usage(t, pool); after.FreeBytes+slackBytes < grown.FreeBytes+volumeBytes {
		t.Fatalf("destroying a thick volume freed too little: free %d, was %d with it", after.FreeBytes, grown.FreeBytes)
	}
}

func testPoolFullRefusesAndChangesNothing(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	create(t, pool, "thick", volumeBytes, backend.Thick)
	before := usage(t, pool)
	tooBig := (before.FreeBytes/mib + 64) * mib
	wantRefusal(t, pool.CreateVolume("huge", tooBig, backend.Thick), backend.ErrPoolFull, "a thick volume beyond the free space")
	if _, err := pool.Volume("huge"); err == nil {
		t.Fatal("a refused thick create left a volume behind")
	}
	wantFreeAbout(t, pool, before, "a refused thick create")

	wantRefusal(t, pool.ResizeVolume("thick", volumeBytes+tooBig), backend.ErrPoolFull, "a thick grow beyond the free space")
	if info := volumeInfo(t, pool, "thick"); info.SizeBytes != volumeBytes {
		t.Fatalf("a refused grow changed the size to %d", info.SizeBytes)
	}
	wantFreeAbout(t, pool, before, "a refused thick grow")

	// Thin volumes promise nothing, so any size is created.
	create(t, pool, "thin", tooBig, backend.Thin)
	must(t, pool.ResizeVolume("thin", 2*tooBig), "a thin grow beyond the free space")
}
