package zfs

import (
	"fmt"
	"strings"

	"github.com/baton-dr/baton/storage/backend"
)

// maxNameBytes is ZFS_MAX_DATASET_NAME_LEN less its terminating NUL: the whole
// name, "pool/volume@snapshot", must fit.
const maxNameBytes = 255

// checkComponent applies zfs_namecheck's rules to one component of a dataset
// name (a volume or a snapshot name). Volumes are flat in baton's pool, so
// '/' is refused too. It returns libzfs's explanation of a bad name.
func checkComponent(name string) (string, bool) {
	switch {
	case name == "":
		return "empty component or misplaced '@' or '#' delimiter in name", false
	case strings.Contains(name, "@"):
		return "snapshot delimiter '@' is not expected here", false
	case strings.Contains(name, "#"):
		return "bookmark delimiter '#' is not expected here", false
	case name == "." || name == "..":
		return "self reference, '.' is found in name", false
	}
	for i := 0; i < len(name); i++ {
		if !backend.IsNameChar(name[i]) {
			return fmt.Sprintf("invalid character '%c' in name", name[i]), false
		}
	}
	return "", true
}

// datasetPath is the name zfs prints for a volume: "tank/pvc-1".
func (p *Pool) datasetPath(volume string) string { return p.name + "/" + volume }

// snapshotPath is the name zfs prints for a snapshot: "tank/pvc-1@s1".
func (p *Pool) snapshotPath(volume, snapshot string) string {
	return p.name + "/" + volume + "@" + snapshot
}

// devicePath is where Linux exposes a zvol.
func (p *Pool) devicePath(volume string) string { return "/dev/zvol/" + p.datasetPath(volume) }

// checkName validates a volume or snapshot name and the full name's length.
func (p *Pool) checkName(component, fullName string) (string, bool) {
	if why, ok := checkComponent(component); !ok {
		return why, false
	}
	if len(fullName) > maxNameBytes {
		return "name is too long", false
	}
	return "", true
}

// niceBytes prints a power-of-two size as zfs_nicebytes does ("8K", "128K").
func niceBytes(sizeBytes uint64) string {
	units := []string{"B", "K", "M", "G", "T", "P", "E"}
	unit := 0
	for sizeBytes >= 1024 && sizeBytes%1024 == 0 && unit < len(units)-1 {
		sizeBytes /= 1024
		unit++
	}
	return fmt.Sprintf("%d%s", sizeBytes, units[unit])
}
