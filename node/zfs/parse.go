package zfs

import (
	"fmt"
	"strconv"
	"strings"
)

// parseTable splits `zfs ... -H` output: one row per line, fields separated by
// a tab, each row exactly columns wide. zfs never prints a tab inside a
// value (dataset names cannot hold one), so a row of another width is a
// broken output, not a value to guess at.
func parseTable(out []byte, columns int) ([][]string, error) {
	var rows [][]string
	for i, line := range strings.Split(string(out), "\n") {
		if line == "" {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != columns {
			return nil, fmt.Errorf("zfs output line %d has %d fields, want %d: %q", i+1, len(fields), columns, line)
		}
		rows = append(rows, fields)
	}
	return rows, nil
}

// parseBytes reads a -p number. zfs prints "-" for a property that does not
// apply, which reads as zero.
func parseBytes(field string) (uint64, error) {
	if field == "-" {
		return 0, nil
	}
	n, err := strconv.ParseUint(field, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("zfs printed %q where a number belongs", field)
	}
	return n, nil
}

// parseOnOff reads a boolean property.
func parseOnOff(field string) (bool, error) {
	switch field {
	case "on":
		return true, nil
	case "off", "-":
		return false, nil
	}
	return false, fmt.Errorf("zfs printed %q where on or off belongs", field)
}

// volumeColumns are the properties Volume and Volumes list, in order.
const volumeColumns = "name,volsize,refreservation,usedbydataset,origin,readonly"

// volumeRow is one line of `zfs list -H -p -o volumeColumns`.
type volumeRow struct {
	dataset             string
	sizeBytes           uint64
	refreservationBytes uint64
	usedBytes           uint64
	origin              string // "pool/volume@snapshot", or "" for none
	readOnly            bool
}

func parseVolumes(out []byte) ([]volumeRow, error) {
	rows, err := parseTable(out, 6)
	if err != nil {
		return nil, err
	}
	volumes := make([]volumeRow, 0, len(rows))
	for _, f := range rows {
		v := volumeRow{dataset: f[0]}
		if v.sizeBytes, err = parseBytes(f[1]); err != nil {
			return nil, err
		}
		if v.refreservationBytes, err = parseBytes(f[2]); err != nil {
			return nil, err
		}
		if v.usedBytes, err = parseBytes(f[3]); err != nil {
			return nil, err
		}
		if f[4] != "-" {
			v.origin = f[4]
		}
		if v.readOnly, err = parseOnOff(f[5]); err != nil {
			return nil, err
		}
		volumes = append(volumes, v)
	}
	return volumes, nil
}

// snapshotColumns are the properties Snapshots lists, in order.
const snapshotColumns = "name,guid,createtxg,used"

// snapshotRow is one line of `zfs list -H -p -t snapshot -o snapshotColumns`.
type snapshotRow struct {
	dataset   string // "pool/volume"
	name      string // after the '@'
	guid      uint64
	createTxg uint64
	usedBytes uint64
}

func parseSnapshots(out []byte) ([]snapshotRow, error) {
	rows, err := parseTable(out, 4)
	if err != nil {
		return nil, err
	}
	snapshots := make([]snapshotRow, 0, len(rows))
	for _, f := range rows {
		dataset, name, ok := strings.Cut(f[0], "@")
		if !ok || dataset == "" || name == "" {
			return nil, fmt.Errorf("zfs listed %q as a snapshot", f[0])
		}
		s := snapshotRow{dataset: dataset, name: name}
		if s.guid, err = parseBytes(f[1]); err != nil {
			return nil, err
		}
		if s.createTxg, err = parseBytes(f[2]); err != nil {
			return nil, err
		}
		if s.usedBytes, err = parseBytes(f[3]); err != nil {
			return nil, err
		}
		if s.guid == 0 {
			return nil, fmt.Errorf("zfs listed snapshot %q without a guid", f[0])
		}
		snapshots = append(snapshots, s)
	}
	return snapshots, nil
}

// spaceRow is `zfs list -H -p -o used,available <dataset>`.
type spaceRow struct {
	usedBytes      uint64
	availableBytes uint64
}

func parseSpace(out []byte) (spaceRow, error) {
	rows, err := parseTable(out, 2)
	if err != nil {
		return spaceRow{}, err
	}
	if len(rows) != 1 {
		return spaceRow{}, fmt.Errorf("zfs listed %d rows of space, want 1", len(rows))
	}
	var s spaceRow
	if s.usedBytes, err = parseBytes(rows[0][0]); err != nil {
		return spaceRow{}, err
	}
	if s.availableBytes, err = parseBytes(rows[0][1]); err != nil {
		return spaceRow{}, err
	}
	return s, nil
}
