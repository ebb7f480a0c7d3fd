package webapps

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pool is how the fail-over tests make a crash-consistent copy of an
// application's volumes, the way baton's btrfs backend does: a loop-backed
// btrfs filesystem whose subvolume holds one ext4 image per volume, each
// attached to a loop device and mounted where a container mounts it. A
// snapshot of the subvolume is every volume at one instant -- what the loop
// devices had written, not what sat in the ext4 page caches above them --
// so starting the application on it is starting it after a power loss:
// ext4 replays its journal at mount, MariaDB its redo log, SQLite its
// journal. Needs root, loop devices, btrfs and ext4.
type pool struct {
	t       *testing.T
	dir     string
	mnt     string   // the btrfs filesystem
	loop    string   // its loop device
	volumes []string // the volumes' loop devices, detached at the end
	mounts  []string // the volumes' mounts, unmounted at the end
}

func newPool(t *testing.T) *pool {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the fail-over tests attach loop devices and mount filesystems: they need root")
	}
	for _, tool := range []string{"losetup", "mkfs.btrfs", "btrfs", "mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: the fail-over tests need util-linux, btrfs-progs and e2fsprogs", tool)
		}
	}
	p := &pool{t: t, dir: t.TempDir()}
	t.Cleanup(p.release)
	image := filepath.Join(p.dir, "pool.img")
	p.sh("truncate", "-s", "3G", image)
	p.loop = p.sh("losetup", "--find", "--show", image)
	p.sh("mkfs.btrfs", "-q", p.loop)
	p.mnt = filepath.Join(p.dir, "pool")
	if err := os.MkdirAll(p.mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	p.sh("mount", p.loop, p.mnt)
	return p
}

func (p *pool) sh(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (p *pool) attach(file string) string {
	p.t.Helper()
	loop := p.sh("losetup", "--find", "--show", file)
	p.volumes = append(p.volumes, loop)
	return loop
}

func (p *pool) mount(device, at string) string {
	p.t.Helper()
	if err := os.MkdirAll(at, 0o755); err != nil {
		p.t.Fatal(err)
	}
	p.sh("mount", device, at)
	p.mounts = append(p.mounts, at)
	return at
}

// site makes an empty subvolume for one site's copy of the volumes.
func (p *pool) site(name string) {
	p.t.Helper()
	p.sh("btrfs", "subvolume", "create", filepath.Join(p.mnt, name))
}

// volume makes a new ext4 volume in site's subvolume, mounted, and returns
// where.
func (p *pool) volume(site, name string) string {
	p.t.Helper()
	image := filepath.Join(p.mnt, site, name+".img")
	p.sh("truncate", "-s", "512M", image)
	loop := p.attach(image)
	p.sh("mkfs.ext4", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", loop)
	return p.mount(loop, filepath.Join(p.dir, "mounts", site, name))
}

// snapshot copies every volume of from into to, at one instant.
func (p *pool) snapshot(from, to string) time.Duration {
	p.t.Helper()
	start := time.Now()
	p.sh("btrfs", "subvolume", "snapshot", filepath.Join(p.mnt, from), filepath.Join(p.mnt, to))
	return time.Since(start)
}

// open attaches and mounts a copied volume (ext4 replays its journal) and
// returns where.
func (p *pool) open(site, name string) string {
	p.t.Helper()
	loop := p.attach(filepath.Join(p.mnt, site, name+".img"))
	return p.mount(loop, filepath.Join(p.dir, "mounts", site, name))
}

// release unmounts and detaches the volumes, then the pool; it runs after
// the containers using the mounts are removed (they are made later, so
// their cleanups run first).
func (p *pool) release() {
	for i := len(p.mounts) - 1; i >= 0; i-- {
		p.undo("umount", p.mounts[i])
	}
	for i := len(p.volumes) - 1; i >= 0; i-- {
		p.undo("losetup", "--detach", p.volumes[i])
	}
	if p.mnt != "" {
		p.undo("umount", p.mnt)
	}
	if p.loop != "" {
		p.undo("losetup", "--detach", p.loop)
	}
}

func (p *pool) undo(args ...string) {
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		p.t.Errorf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func (p *pool) String() string { return fmt.Sprintf("pool %s", p.mnt) }
