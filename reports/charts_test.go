package reports

import (
	"strings"
	"testing"
	"time"
)

func TestGroupSyncs(t *testing.T) {
	var syncs []Sync
	for i := range 1000 {
		syncs = append(syncs, Sync{Volume: "v", BytesShipped: 10, BytesChanged: 9, Failback: i == 500})
	}
	bars := groupSyncs(syncs)
	if len(bars) > maxSyncBars+2 {
		t.Errorf("%d bars for 1,000 syncs, bound %d", len(bars), maxSyncBars)
	}
	var shipped uint64
	failbacks := 0
	for _, b := range bars {
		shipped += b.shipped
		if b.failback {
			failbacks++
			if b.first != 500 || b.last != 500 {
				t.Errorf("the fail-back sync shares a bar: %+v", b)
			}
		}
	}
	if shipped != 10_000 || failbacks != 1 {
		t.Errorf("bars sum %d bytes with %d fail-backs; want 10000 and 1", shipped, failbacks)
	}
	if few := groupSyncs(syncs[:5]); len(few) != 5 {
		t.Errorf("5 syncs drew %d bars", len(few))
	}
}

func TestRPOChartClassesRelocationsThatLoseWrites(t *testing.T) {
	result := Result{Started: t0, Failovers: []Failover{
		{Volume: "db", RPO: 4 * time.Second, LostWrites: 12},
		{Volume: "db", Planned: true},
		{Volume: "db", Planned: true, LostWrites: 1, RPO: time.Second},
	}}
	chart := buildRPOChart(result)
	var classes []string
	for _, bar := range chart.Bars {
		classes = append(classes, bar.Class)
	}
	if got := strings.Join(classes, ","); got != "bar bar-unplanned,bar bar-planned,bar bar-broken" {
		t.Errorf("classes %s", got)
	}
	if chart.Bars[1].H != px(1.5) {
		t.Errorf("a zero RPO must still show as a sliver, got height %s", chart.Bars[1].H)
	}
	if chart.YTicks[len(chart.YTicks)-1].Label != "5.0s" {
		t.Errorf("axis top %q, want 5.0s", chart.YTicks[len(chart.YTicks)-1].Label)
	}
}
