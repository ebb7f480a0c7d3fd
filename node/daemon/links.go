package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/core"
)

// devicePool is a pool whose open volumes are block devices with a path.
type devicePool interface {
	backend.Pool
	DevicePath(volume string) (string, error)
}

// links keeps DeviceDir/<dataset> a symbolic link to the block device of
// every Up volume of the spec, holding the volume open so that its device
// exists (a btrfs volume's loop device lives only while it is open).
type links struct {
	dir  string
	pool devicePool
	held map[string]heldDevice // by dataset
}

type heldDevice struct {
	device backend.Device
	path   string
}

// tmpPrefix marks a link being made; a sweep removes leftovers.
const tmpPrefix = ".tmp-"

func newLinks(dir string, pool backend.Pool) (*links, error) {
	p, ok := pool.(devicePool)
	if !ok {
		return nil, fmt.Errorf("daemon: a device directory needs a pool that names its devices; %T does not", pool)
	}
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("daemon: device directory %q is not an absolute path", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &links{dir: dir, pool: p, held: map[string]heldDevice{}}, nil
}

// wanted lists the datasets whose devices the spec wants: its Up volumes
// that are not to be destroyed.
func wanted(spec core.NodeSpec) map[string]bool {
	want := map[string]bool{}
	for _, v := range spec.Volumes {
		if v.Up && !slices.Contains(spec.Destroy, v.Dataset) {
			want[v.Dataset] = true
		}
	}
	return want
}

// release removes the links of, and closes, the devices the spec no longer
// wants: before the agent runs, so that a destroy finds the volume closed.
func (l *links) release(spec core.NodeSpec) []string {
	want := wanted(spec)
	var problems []string
	for _, dataset := range slices.Sorted(maps.Keys(l.held)) {
		if !want[dataset] {
			if err := l.drop(dataset); err != nil {
				problems = append(problems, err.Error())
			}
		}
	}
	return problems
}

// publish opens the wanted volumes the node holds and points their links at
// their devices, then removes links nobody holds (a previous run's).
func (l *links) publish(spec core.NodeSpec, status core.NodeStatus) []string {
	present := map[string]bool{}
	for _, d := range status.Datasets {
		present[d.Name] = true
	}
	var problems []string
	for _, dataset := range slices.Sorted(maps.Keys(wanted(spec))) {
		if !present[dataset] {
			continue // the agent could not make it, and said so
		}
		if err := l.hold(dataset); err != nil {
			problems = append(problems, fmt.Sprintf("failed to link the device of %s: %v", dataset, err))
		}
	}
	if err := l.sweep(); err != nil {
		problems = append(problems, fmt.Sprintf("failed to clean the device directory %s: %v", l.dir, err))
	}
	return problems
}

// hold opens a volume (once) and makes its link point at its device.
func (l *links) hold(dataset string) error {
	if dataset == "" || strings.ContainsRune(dataset, os.PathSeparator) || strings.HasPrefix(dataset, ".") {
		return fmt.Errorf("%q cannot name a link", dataset)
	}
	h, ok := l.held[dataset]
	if !ok {
		device, err := l.pool.Open(dataset)
		if err != nil {
			return err
		}
		path, err := l.pool.DevicePath(dataset)
		if err != nil {
			return errors.Join(err, device.Close())
		}
		h = heldDevice{device: device, path: path}
		l.held[dataset] = h
	}
	return pointLink(filepath.Join(l.dir, dataset), h.path)
}

// pointLink makes link point at target, replacing what was there in one
// rename, so a reader never finds it missing or half made.
func pointLink(link, target string) error {
	if current, err := os.Readlink(link); err == nil && current == target {
		return nil
	}
	tmp := filepath.Join(filepath.Dir(link), tmpPrefix+filepath.Base(link))
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, link)
}

// drop removes a held device's link, then closes the device.
func (l *links) drop(dataset string) error {
	h := l.held[dataset]
	delete(l.held, dataset)
	err := os.Remove(filepath.Join(l.dir, dataset))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if closeErr := h.device.Close(); closeErr != nil {
		err = errors.Join(err, fmt.Errorf("failed to close the device of %s: %w", dataset, closeErr))
	}
	return err
}

// sweep removes the symbolic links of the directory that no held device
// owns: a previous run's, pointing at loop devices long detached. Other
// files are left alone; the directory is the daemon's, but not only its.
func (l *links) sweep() error {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		_, held := l.held[e.Name()]
		if e.Type()&fs.ModeSymlink == 0 || held {
			continue
		}
		if err := os.Remove(filepath.Join(l.dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// close drops every held device that nothing else uses and reports the
// datasets whose devices are in use: those stay open and linked until the
// process exits, and stay attached after it for the next start to adopt.
func (l *links) close() ([]string, error) {
	var inUse []string
	var errs []error
	for _, dataset := range slices.Sorted(maps.Keys(l.held)) {
		if deviceInUse(l.held[dataset].path) {
			inUse = append(inUse, dataset)
			continue
		}
		errs = append(errs, l.drop(dataset))
	}
	return inUse, errors.Join(errs...)
}

// deviceInUse reports whether a block device is claimed by someone who holds
// it exclusively: a mounted filesystem (or device-mapper, md). The kernel
// refuses an exclusive open of such a device with EBUSY. A block-mode volume
// bind-mounted into a pod is not claimed and reads as not in use.
func deviceInUse(path string) bool {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_EXCL|syscall.O_CLOEXEC, 0)
	if err != nil {
		return errors.Is(err, syscall.EBUSY)
	}
	syscall.Close(fd)
	return false
}
