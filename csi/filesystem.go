package csi

import "fmt"

// DefaultFsType is what a blank device is formatted with when the volume
// names no filesystem.
const DefaultFsType = "ext4"

// chooseFilesystem applies rule 7 to what the device carries (found; empty
// for a blank device), what the volume asks (asked; empty: no opinion) and
// what was recorded of it before (recorded). It says whether to format and
// with what to mount.
func chooseFilesystem(found, asked, recorded string) (format bool, fsType string, err error) {
	switch {
	case found != "" && asked != "" && found != asked:
		return false, "", fmt.Errorf("%w: the device carries %s and the volume asks for %s; it is never reformatted", ErrFilesystemMismatch, found, asked)
	case found != "":
		return false, found, nil
	case recorded != "":
		return false, "", fmt.Errorf("%w: the device is blank, but a node found %s on this volume before: refusing to format a volume that held data", ErrFilesystemMismatch, recorded)
	case asked != "":
		return true, asked, nil
	}
	return true, DefaultFsType, nil
}
