package discovery

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// lsblkArgs ask lsblk for every block device with what candidate needs,
// sizes in bytes. MOUNTPOINT (one per device) rather than MOUNTPOINTS: older
// util-linux knows only the former, and one mount point is enough to refuse.
var lsblkArgs = []string{"--json", "--bytes", "--output", "NAME,PATH,TYPE,SIZE,MODEL,RO,RM,FSTYPE,MOUNTPOINT"}

// blockDevice is one device of `lsblk --json`, with its children (partitions,
// holders) nested.
type blockDevice struct {
	Name       string        `json:"name"`
	Path       string        `json:"path"`
	Type       string        `json:"type"`
	Size       lsblkInt      `json:"size"`
	Model      *string       `json:"model"`
	RO         lsblkBool     `json:"ro"`
	RM         lsblkBool     `json:"rm"`
	FSType     *string       `json:"fstype"`
	Mountpoint *string       `json:"mountpoint"`
	Children   []blockDevice `json:"children"`
}

type lsblkOutput struct {
	BlockDevices []blockDevice `json:"blockdevices"`
}

// errLsblk reports lsblk output this package cannot read.
var errLsblk = errors.New("unreadable lsblk output")

// parseLsblk reads `lsblk --json` and checks each top-level device: a name,
// an absolute /dev path. No output at all is no device (lsblk prints nothing
// when there are none).
func parseLsblk(out []byte) ([]blockDevice, error) {
	if len(bytes.TrimSpace(out)) == 0 {
		return nil, nil
	}
	var parsed lsblkOutput
	decoder := json.NewDecoder(bytes.NewReader(out))
	if err := decoder.Decode(&parsed); err != nil {
		return nil, fmt.Errorf("%w: %w", errLsblk, err)
	}
	if decoder.More() {
		return nil, fmt.Errorf("%w: data after the document", errLsblk)
	}
	for _, d := range parsed.BlockDevices {
		if d.Name == "" || !strings.HasPrefix(d.Path, "/dev/") || strings.Contains(d.Path, "..") {
			return nil, fmt.Errorf("%w: a device named %q at %q", errLsblk, clip(d.Name), clip(d.Path))
		}
	}
	return parsed.BlockDevices, nil
}

// lsblkInt is a size: a JSON number (util-linux 2.33 and later with --bytes)
// or a string of digits (earlier versions print every column as a string).
type lsblkInt int64

func (n *lsblkInt) UnmarshalJSON(data []byte) error {
	text := strings.Trim(string(data), `"`)
	if text == "null" || text == "" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil || v < 0 {
		return fmt.Errorf("size %q is not a byte count", clip(text))
	}
	*n = lsblkInt(v)
	return nil
}

// lsblkBool is a flag: a JSON boolean, or "0"/"1" from older util-linux.
type lsblkBool bool

func (b *lsblkBool) UnmarshalJSON(data []byte) error {
	switch string(data) {
	case "true", `"1"`, "1":
		*b = true
	case "false", `"0"`, "0", "null":
		*b = false
	default:
		return fmt.Errorf("flag %q is neither true nor false", clip(string(data)))
	}
	return nil
}

// maxFieldBytes is the longest path and model the CRDs take.
const maxFieldBytes = 255

// ownPrefixes name the block devices a storage node makes itself, which are
// never candidates: zvols, DRBD, zram, ram disks, network block devices.
var ownPrefixes = []string{"zd", "drbd", "zram", "ram", "nbd"}

// candidate says whether a device lsblk reports could carry a pool, and why
// not when it could not.
func candidate(d blockDevice) (Device, string) {
	switch {
	case d.Type != "disk":
		return Device{}, "type " + d.Type
	case hasAnyPrefix(d.Name, ownPrefixes):
		return Device{}, "a device the node makes itself"
	case bool(d.RO) || bool(d.RM):
		return Device{}, "read-only or removable"
	case d.Size <= 0:
		return Device{}, "empty"
	case len(d.Children) > 0:
		return Device{}, "has partitions or holders"
	case d.Mountpoint != nil && *d.Mountpoint != "":
		return Device{}, "mounted"
	case d.FSType != nil && *d.FSType != "":
		return Device{}, "holds " + *d.FSType
	case len(d.Path) > maxFieldBytes:
		return Device{}, "a path longer than a StorageNode takes"
	}
	model := ""
	if d.Model != nil {
		model = strings.TrimSpace(*d.Model)
	}
	if len(model) > maxFieldBytes {
		model = model[:maxFieldBytes]
	}
	return Device{Path: d.Path, Type: Disk, SizeBytes: int64(d.Size), Model: model}, ""
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// clip shortens outside text quoted in an error.
func clip(s string) string {
	const most = 64
	if len(s) > most {
		return s[:most] + "..."
	}
	return s
}
