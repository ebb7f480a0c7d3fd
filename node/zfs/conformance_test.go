package zfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

// poolFileBytes is each test pool's sparse file: pooltest needs 256 MiB free,
// and zfs keeps at least 128 MiB of a small pool back (slop space).
const poolFileBytes = 1 << 30

// TestConformanceOnRealZFS runs pooltest on real zfs: each subtest gets fresh
// pools on sparse files in the directory BATON_VMTEST_ZFS names. `make
// vmtest` sets it inside a guest; elsewhere the test is skipped, because it
// creates and destroys pools as root.
func TestConformanceOnRealZFS(t *testing.T) {
	dir := os.Getenv("BATON_VMTEST_ZFS")
	if dir == "" {
		t.Skip("BATON_VMTEST_ZFS names no directory for test pools: real zfs runs in `make vmtest`")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cmder := exec.Local{}
	pools := 0
	pooltest.Run(t, func(t *testing.T) backend.Pool {
		pools++
		name := fmt.Sprintf("pooltest%d", pools)
		file := filepath.Join(dir, name+".img")
		ctx := context.Background()
		if err := CreateFilePool(ctx, cmder, name, file, poolFileBytes); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := DestroyFilePool(ctx, cmder, name, file); err != nil {
				t.Errorf("DestroyFilePool %s: %v", name, err)
			}
		})
		pool, err := New(Options{Cmder: cmder, Dataset: name})
		if err != nil {
			t.Fatal(err)
		}
		return pool
	})
}
