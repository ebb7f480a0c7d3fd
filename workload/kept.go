package workload

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// ErrNotAModel: CheckKept reads the histories of this package's models; an
// application run as itself has none.
var ErrNotAModel = errors.New("not a workload model of this package")

// KeptVolume counts, for one volume, the acknowledged writes of a window of
// its history that a kept copy holds -- the old primary's diverged tail,
// which never enters the chain.
//
// Each acknowledged write of the window is held (the copy's block holds it,
// or a later write to the block: the writer's own, or one of the named
// overwriters' -- the tail instance the old site wrote on), lost (the block
// holds an older write of the history, or zeros -- or there is no copy of
// the volume to read at all: nothing holds the write), or corrupt (the block
// holds what no write of the window explains: garbage, a failed checksum,
// another volume's block, a write of the history issued after the window or
// never issued). Held + Lost + Corrupt = Acknowledged.
type KeptVolume struct {
	Volume       string
	Acknowledged int
	Held         int
	// Overwritten are the held writes whose block an overwriter wrote since.
	Overwritten int
	Lost        int
	Corrupt     int
	// Findings say what each lost or corrupt block held, at most
	// maxViolationsPerVolume; Suppressed counts the rest.
	Findings   []Violation
	Suppressed int
}

// Kept is what CheckKept found on a workload's kept copy.
type Kept struct {
	Workload    string
	From, Until time.Time
	Volumes     []KeptVolume // in the order of Workload.Volumes
}

// Acknowledged, Held, Lost and Corrupt total the volumes' counts.
func (k Kept) Acknowledged() int { return k.total(func(v KeptVolume) int { return v.Acknowledged }) }

// Held totals the volumes' held writes.
func (k Kept) Held() int { return k.total(func(v KeptVolume) int { return v.Held }) }

// Lost totals the volumes' lost writes.
func (k Kept) Lost() int { return k.total(func(v KeptVolume) int { return v.Lost }) }

// Corrupt totals the volumes' corrupt writes.
func (k Kept) Corrupt() int { return k.total(func(v KeptVolume) int { return v.Corrupt }) }

func (k Kept) total(count func(KeptVolume) int) int {
	n := 0
	for _, v := range k.Volumes {
		n += count(v)
	}
	return n
}

// volume returns one volume's counts.
func (k Kept) volume(name string) (KeptVolume, bool) {
	for _, v := range k.Volumes {
		if v.Volume == name {
			return v, true
		}
	}
	return KeptVolume{}, false
}

// String reports the counts, one line per volume and per finding.
func (k Kept) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s's writes of %s..%s in the kept copy:\n", k.Workload,
		k.From.UTC().Format(time.RFC3339Nano), k.Until.UTC().Format(time.RFC3339Nano))
	for _, v := range k.Volumes {
		fmt.Fprintf(&b, "  %s: %d acknowledged: %d held (%d overwritten), %d lost, %d corrupt\n",
			v.Volume, v.Acknowledged, v.Held, v.Overwritten, v.Lost, v.Corrupt)
		for _, f := range v.Findings {
			fmt.Fprintf(&b, "    %s\n", f)
		}
		if v.Suppressed > 0 {
			fmt.Fprintf(&b, "    ... and %d more\n", v.Suppressed)
		}
	}
	return b.String()
}

// CheckKept reads a kept copy of w's volumes and counts which of the
// acknowledged writes w issued in [from, until] it holds, whether they are
// in the current history or were discarded by a Resume since (the writes a
// fail-over lost are exactly those the old primary's tail keeps). Blocks
// that a workload named in overwriters wrote later, at the same volume and
// address, hold the writes they replaced; check that writer's own writes
// with its own CheckKept. It reads each block the window wrote once,
// O(writes in the window), and changes nothing.
func CheckKept(w Workload, copy Devices, from, until time.Time, overwriters ...string) (Kept, error) {
	if until.Before(from) {
		panic(fmt.Sprintf("workload: a kept window from %s to %s", from, until))
	}
	b, ok := w.(interface{ volumeModels() []volumeModel })
	if !ok {
		return Kept{}, fmt.Errorf("%w: %T", ErrNotAModel, w)
	}
	others := make([][nameSizeBytes]byte, 0, len(overwriters))
	for _, name := range overwriters {
		others = append(others, nameField(name))
	}
	k := Kept{Workload: w.Name(), From: from, Until: until}
	for _, m := range b.volumeModels() {
		h := m.hist()
		k.Volumes = append(k.Volumes, h.checkKept(copy[h.volumeName], from.UnixNano(), until.UnixNano(), others))
	}
	return k, nil
}

// volumeModels lets CheckKept read the histories.
func (b *base) volumeModels() []volumeModel { return b.models }

// checkKept counts one volume's acknowledged writes of the window on dev.
func (h *history) checkKept(dev backend.Device, fromNanos, untilNanos int64, others [][nameSizeBytes]byte) KeptVolume {
	kv := KeptVolume{Volume: h.volumeName}
	r := &reporter{volume: h.volumeName}
	acked := map[uint64][]int{} // block -> the window's acknowledged writes to it, oldest first
	for _, i := range h.window(fromNanos, untilNanos) {
		if h.writes[i].acked {
			acked[h.writes[i].block] = append(acked[h.writes[i].block], i)
		}
	}
	for _, block := range slices.Sorted(maps.Keys(acked)) {
		writes := acked[block]
		last := h.describe(writes[len(writes)-1])
		kv.Acknowledged += len(writes)
		if dev == nil {
			kv.Lost += len(writes)
			r.add(NotKept, block, last, fmt.Sprintf("no kept copy of the volume: the window's %d acknowledged writes to the block lost",
				len(writes)))
			continue
		}
		s := h.keptState(dev, block, writes, untilNanos, others)
		switch {
		case s.finding != "":
			kv.Corrupt += len(writes)
			r.add(NotKept, block, last, s.finding)
		case s.held < len(writes):
			kv.Held += s.held
			kv.Lost += len(writes) - s.held
			r.add(NotKept, block, last, fmt.Sprintf("%s: %d of the window's %d acknowledged writes to the block lost",
				h.describe(s.found), len(writes)-s.held, len(writes)))
		default:
			kv.Held += s.held
		}
		if s.overwritten {
			kv.Overwritten += len(writes)
		}
	}
	if kv.Held+kv.Lost+kv.Corrupt != kv.Acknowledged || kv.Overwritten > kv.Held {
		panic(fmt.Sprintf("workload: volume %s: kept counts do not add up: %+v", h.volumeName, kv))
	}
	kv.Findings, kv.Suppressed = r.violations, r.suppressed
	return kv
}

// window lists the indexes of the writes issued in [from, until], current
// or discarded: writes are in time order, as steps never go back.
func (h *history) window(fromNanos, untilNanos int64) []int {
	var out []int
	for i := range h.writes {
		if at := h.writes[i].atNanos; at >= fromNanos && at <= untilNanos {
			out = append(out, i)
		}
	}
	return out
}

// keptBlock is what one block of a kept copy holds of the window's writes.
type keptBlock struct {
	held        int  // how many of the window's acknowledged writes to the block it holds
	found       int  // the write of the history it holds; -1: zeros or another writer's
	overwritten bool // an overwriter wrote it since
	finding     string
}

// keptState reads one block of the copy against writes, the window's
// acknowledged writes to it, oldest first.
func (h *history) keptState(dev backend.Device, block uint64, writes []int, untilNanos int64,
	others [][nameSizeBytes]byte) keptBlock {
	none := keptBlock{found: -1}
	if err := readBlock(dev, block, h.read); err != nil {
		return keptBlock{found: -1, finding: "an unreadable block: " + err.Error()}
	}
	hdr, state := decodeBlock(h.read)
	switch {
	case state == blockZero:
		return none
	case state != blockValid:
		return keptBlock{found: -1, finding: "a " + state.String() + " block"}
	case hdr.volume != h.volume || hdr.block != block:
		return keptBlock{found: -1, finding: "a block of another volume or address"}
	case hdr.workload != h.workload && slices.Contains(others, hdr.workload):
		return keptBlock{held: len(writes), found: -1, overwritten: true}
	case hdr.workload != h.workload:
		return keptBlock{found: -1, finding: fmt.Sprintf("write #%d of workload %s", hdr.seq, fieldName(hdr.workload))}
	}
	k, ok := h.index(hdr.seq)
	switch {
	case !ok || h.writes[k].block != block || h.writes[k].checksum != hdr.checksum:
		return keptBlock{found: -1, finding: fmt.Sprintf("write #%d, which this volume never issued there", hdr.seq)}
	case h.writes[k].atNanos > untilNanos:
		return keptBlock{found: -1, finding: h.describe(k) + ", issued after the window"}
	}
	// The block holds write k: every write of the window to it up to k.
	s := keptBlock{found: k}
	for s.held < len(writes) && writes[s.held] <= k {
		s.held++
	}
	return s
}
