package workload

import (
	"testing"
)

func TestStabPicksTheCutMostBlocksAgreeOn(t *testing.T) {
	for _, tc := range []struct {
		name      string
		intervals [][2]int
		want      int
	}{
		{"no blocks", nil, 0},
		{"all zero", [][2]int{{0, 3}, {0, 5}}, 0},
		{"consistent: right after the last write held", [][2]int{{2, 9}, {4, 9}, {0, 9}}, 4},
		{"one block from the future", [][2]int{{3, 9}, {3, 7}, {8, 9}, {0, 5}}, 3},
		{"one block missing its last write", [][2]int{{5, 9}, {6, 9}, {0, 2}}, 6},
		{"ties go to the earlier cut", [][2]int{{0, 1}, {5, 6}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var obs []observation
			for i, iv := range tc.intervals {
				obs = append(obs, observation{block: uint64(i), lo: iv[0], hi: iv[1]})
			}
			if got := stab(obs); got != tc.want {
				t.Fatalf("stab(%v) = %d, want %d", tc.intervals, got, tc.want)
			}
		})
	}
}

func TestStabPanicsOnAnEmptyInterval(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("an empty interval was accepted")
		}
	}()
	stab([]observation{{lo: 3, hi: 2}})
}
