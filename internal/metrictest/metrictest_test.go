package metrictest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestValueReadsTheSeriesOfExactlyTheseLabels(t *testing.T) {
	registry := prometheus.NewRegistry()
	passes := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "passes_total", Help: "h"}, []string{"result", "node"})
	depth := prometheus.NewGauge(prometheus.GaugeOpts{Name: "depth", Help: "h"})
	registry.MustRegister(passes, depth)
	passes.WithLabelValues("ok", "n1").Add(3)
	passes.WithLabelValues("ok", "n2").Add(5)
	depth.Set(7)
	if got := Value(t, registry, "passes_total", map[string]string{"result": "ok", "node": "n2"}); got != 5 {
		t.Errorf("passes of n2: %v, want 5", got)
	}
	if got := Value(t, registry, "depth", nil); got != 7 {
		t.Errorf("depth: %v, want 7", got)
	}
}
