package btrfs

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/baton-dr/baton/storage/chain"
)

// testdata/subvol-command.bin and snapshot-command.bin are the header and
// first command of real `btrfs send` streams (full, and -p incremental).

func TestReadStreamHeaderOfRealStreams(t *testing.T) {
	for _, c := range []struct {
		file  string
		clone bool
		want  streamHeader
	}{
		{"subvol-command.bin", false, streamHeader{name: "s2", uuid: "b97651db-8af2-b34e-b96e-a6b201a83c3b"}},
		{"snapshot-command.bin", false, streamHeader{name: "s3", uuid: "7e35e15b-dba0-c14b-a88d-3de998abc25a",
			baseUUID: "b97651db-8af2-b34e-b96e-a6b201a83c3b"}},
		{"snapshot-command.bin", true, streamHeader{clone: true, name: "s3", uuid: "7e35e15b-dba0-c14b-a88d-3de998abc25a",
			baseUUID: "b97651db-8af2-b34e-b96e-a6b201a83c3b"}},
	} {
		raw := readTestdata(t, c.file)
		r := bufio.NewReader(io.MultiReader(bytes.NewReader(envelope(c.clone)), bytes.NewReader(raw)))
		got, err := readStreamHeader(r)
		if err != nil || got != c.want {
			t.Fatalf("%s: got %+v, %v; want %+v", c.file, got, err, c.want)
		}
		// The btrfs stream stays whole for btrfs receive.
		if rest, _ := io.ReadAll(r); !bytes.Equal(rest, raw) {
			t.Fatalf("%s: the header read consumed the btrfs stream", c.file)
		}
	}
}

func TestReadStreamHeaderRefusesBrokenStreams(t *testing.T) {
	full := append(envelope(false), readTestdata(t, "subvol-command.bin")...)
	delta := append(envelope(false), readTestdata(t, "snapshot-command.bin")...)
	flip := func(data []byte, at int) []byte {
		out := bytes.Clone(data)
		out[at] ^= 0x40
		return out
	}
	for _, c := range []struct {
		name   string
		stream []byte
	}{
		{"empty", nil},
		{"bad magic", flip(full, 0)},
		{"envelope version", flip(full, 12)},
		{"unknown flag", flip(full, 17)},
		{"clone flag on a full stream", append(envelope(true), readTestdata(t, "subvol-command.bin")...)},
		{"envelope only", envelope(false)},
		{"no btrfs magic", flip(full, envelopeBytes)},
		{"corrupt first command", flip(delta, len(delta)-3)},
		{"truncated first command", full[:len(full)-5]},
		{"huge first command", flip(full, envelopeBytes+sendHeaderBytes+2)},
	} {
		got, err := readStreamHeader(bufio.NewReader(bytes.NewReader(c.stream)))
		if !errors.Is(err, errStream) {
			t.Errorf("%s: got %+v, %v; want errStream", c.name, got, err)
		}
	}
}

func TestCRC32CMatchesTheKernel(t *testing.T) {
	// The first command of a real stream carries the kernel's checksum.
	cmd := readTestdata(t, "subvol-command.bin")[sendHeaderBytes:]
	check := bytes.Clone(cmd)
	clear(check[6:10])
	if got, want := crc32c(check), uint32(cmd[6])|uint32(cmd[7])<<8|uint32(cmd[8])<<16|uint32(cmd[9])<<24; got != want {
		t.Fatalf("crc32c = %#x, the kernel wrote %#x", got, want)
	}
}

func FuzzReadStreamHeader(f *testing.F) {
	f.Add(append(envelope(false), readTestdata(f, "subvol-command.bin")...))
	f.Add(append(envelope(true), readTestdata(f, "snapshot-command.bin")...))
	f.Add(append(envelope(false), readTestdata(f, "full-stream-prefix.bin")...))
	f.Fuzz(func(t *testing.T, stream []byte) {
		h, err := readStreamHeader(bufio.NewReader(bytes.NewReader(stream)))
		if err != nil {
			return
		}
		if h.name == "" || !chain.IsUUID(h.uuid) || (h.baseUUID != "" && !chain.IsUUID(h.baseUUID)) || (h.clone && h.baseUUID == "") {
			t.Fatalf("accepted %+v", h)
		}
	})
}
