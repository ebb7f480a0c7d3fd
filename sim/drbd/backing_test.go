package drbd

import "testing"

func TestProbeSize(t *testing.T) {
	for _, size := range []uint64{0, 1, 2, 3, 4095, 4096, 4097, 1 << 20, 32<<20 + 512, 1<<40 + 12345} {
		v := newMemVolume(size)
		if got := probeSize(&memDevice{v: v}); got != size {
			t.Errorf("probeSize of a %d-byte volume = %d", size, got)
		}
	}
}

func TestTransferTime(t *testing.T) {
	tests := []struct {
		sizeBytes, rate uint64
		want            int64 // nanoseconds
	}{
		{100 << 20, 100 << 20, 1e9},
		{4096, 100 << 20, 39062},
		{0, 1, 0},
		{1 << 63, 1, 1<<63 - 1},
	}
	for _, tc := range tests {
		if got := transferTime(tc.sizeBytes, tc.rate); int64(got) != tc.want {
			t.Errorf("transferTime(%d, %d) = %d, want %d", tc.sizeBytes, tc.rate, got, tc.want)
		}
	}
}
