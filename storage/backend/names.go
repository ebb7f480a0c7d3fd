package backend

// IsNameChar says whether c may stand in a volume or snapshot name: the
// characters of a ZFS dataset name component (zfs_namecheck's valid_char).
// Every Pool takes its names in them, so that a name works on every backend.
func IsNameChar(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '-' || c == '_' || c == '.' || c == ':' || c == ' '
}
