package btrfs

import "path/filepath"

// layout names every path of a pool. Under Options.Dir:
//
//	pool.img                          the sparse file the filesystem lives in
//	mnt/                              where the filesystem is mounted (its top level)
//	mnt/volumes/<v>/                  a plain directory per volume
//	mnt/volumes/<v>/volume.json       provisioning, origin, fence
//	mnt/volumes/<v>/head/             the writable subvolume
//	mnt/volumes/<v>/head/data         the volume's bytes, attached as a loop device
//	mnt/volumes/<v>/snapshots/<s>/    read-only snapshots of head, each with its data
//	mnt/volumes/<v>/.head-new|old     a head being replaced (rollback, receive)
//	mnt/.staging/<n>/                 volumes being built or torn down
//
// A volume appears and disappears by renaming its directory between .staging
// and volumes, which is atomic; a read-only subvolume cannot be moved to
// another directory (btrfs refuses with EROFS), but a plain directory holding
// one can, which is why every volume is a plain directory around subvolumes.
type layout struct {
	dir string // Options.Dir, absolute and with symbolic links resolved
}

const (
	imageName   = "pool.img"
	mountName   = "mnt"
	volumesName = "volumes"
	stagingName = ".staging"
	headName    = "head"
	headNew     = ".head-new"
	headOld     = ".head-old"
	dataName    = "data"
	metaName    = "volume.json"
	snapsName   = "snapshots"
)

func (l layout) image() string   { return filepath.Join(l.dir, imageName) }
func (l layout) mount() string   { return filepath.Join(l.dir, mountName) }
func (l layout) volumes() string { return filepath.Join(l.mount(), volumesName) }
func (l layout) staging() string { return filepath.Join(l.mount(), stagingName) }

func (l layout) volume(v string) string          { return filepath.Join(l.volumes(), v) }
func (l layout) head(v string) string            { return filepath.Join(l.volume(v), headName) }
func (l layout) data(v string) string            { return filepath.Join(l.head(v), dataName) }
func (l layout) meta(v string) string            { return filepath.Join(l.volume(v), metaName) }
func (l layout) snapshots(v string) string       { return filepath.Join(l.volume(v), snapsName) }
func (l layout) snapshot(v, s string) string     { return filepath.Join(l.snapshots(v), s) }
func (l layout) snapshotData(v, s string) string { return filepath.Join(l.snapshot(v, s), dataName) }

// relative is a path as `btrfs subvolume list` prints it: from the top level.
func (l layout) relative(path string) string {
	rel, err := filepath.Rel(l.mount(), path)
	if err != nil {
		panic("btrfs: a pool path outside the mount: " + path)
	}
	return rel
}

// ImagePath is the image file of the pool in dir: what node discovery reports
// as the node's loop file.
func ImagePath(dir string) string { return layout{dir: dir}.image() }
