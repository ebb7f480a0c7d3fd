package zfs

import (
	"fmt"

	"github.com/baton-dr/baton/storage/backend"
)

// checkComponent applies zfs_namecheck's rules to one component of a dataset
// name (a volume or a snapshot name) and returns libzfs's explanation of a bad
// one. A Pool's volumes are flat, so '/' is refused here: zfs would take
// "a/b" for a nested dataset.
func checkComponent(name string) (string, bool) {
	switch {
	case name == "":
		return "empty component or misplaced '@' or '#' delimiter in name", false
	case name == "." || name == "..":
		return "self reference, '.' is found in name", false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '@':
			return "snapshot delimiter '@' is not expected here", false
		case c == '#':
			return "bookmark delimiter '#' is not expected here", false
		case c == '/':
			return "delimiter '/' is not expected here", false
		case !backend.IsNameChar(c):
			return fmt.Sprintf("invalid character '%c' in name", c), false
		}
	}
	return "", true
}

// maxNameBytes is ZFS_MAX_DATASET_NAME_LEN less its terminating NUL.
const maxNameBytes = 255

// checkName refuses a bad component in zfs's words, before zfs runs:
// "cannot create 'tank/a@b': snapshot delimiter '@' is not expected here".
func checkName(verb, fullName, component string) error {
	if why, ok := checkComponent(component); !ok {
		return refuse(backend.ErrInvalid, "cannot %s '%s': %s", verb, fullName, why)
	}
	if len(fullName) > maxNameBytes {
		return refuse(backend.ErrInvalid, "cannot %s '%s': name is too long", verb, fullName)
	}
	return nil
}
