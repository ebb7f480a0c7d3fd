// Package metrictest reads metrics out of a Prometheus registry, for the
// tests of the components that export them.
package metrictest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Value is the value of the counter or gauge called name whose labels are
// exactly labels (nil: a metric without labels). The test fails when the
// registry holds none.
func Value(t testing.TB, registry prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !labelled(m, labels) {
				continue
			}
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s%v", name, labels)
	return 0
}

// labelled says whether m's labels are exactly labels.
func labelled(m *dto.Metric, labels map[string]string) bool {
	for _, l := range m.GetLabel() {
		if value, ok := labels[l.GetName()]; !ok || value != l.GetValue() {
			return false
		}
	}
	return len(m.GetLabel()) == len(labels)
}
