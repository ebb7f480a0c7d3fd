package site

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/replication"
)

// Metrics are the operator's Prometheus metrics. The gauges are set from the
// records after every tick; the counters count shipments as the store writes
// them (a pairing whose last sync changed), so a restart never counts one twice.
type Metrics struct {
	mu           sync.Mutex
	volumes      *prometheus.GaugeVec
	pairings     *prometheus.GaugeVec
	lastSyncAge  *prometheus.GaugeVec
	shippedBytes prometheus.Counter
	shipments    prometheus.Counter
}

// NewMetrics registers the metrics with registerer (controller-runtime's
// metrics.Registry in production, a fresh registry in tests).
func NewMetrics(registerer prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		volumes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "baton_site_volumes",
			Help: "Chain members this site records, by state."}, []string{"state"}),
		pairings: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "baton_site_pairings",
			Help: "Replication pairings of this site's members, by phase of their cycle."}, []string{"phase"}),
		lastSyncAge: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "baton_site_replication_last_sync_age_seconds",
			Help: "Seconds since each pairing's last completed shipment; absent before the first."}, []string{"source", "target"}),
		shippedBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "baton_site_replication_shipped_bytes_total",
			Help: "Bytes shipped to other sites by completed shipments."}),
		shipments: prometheus.NewCounter(prometheus.CounterOpts{Name: "baton_site_replication_shipments_total",
			Help: "Completed shipments to other sites."}),
	}
	for _, c := range []prometheus.Collector{m.volumes, m.pairings, m.lastSyncAge, m.shippedBytes, m.shipments} {
		if err := registerer.Register(c); err != nil {
			return nil, fmt.Errorf("failed to register the operator's metrics: %w", err)
		}
	}
	return m, nil
}

// observe sets the gauges from the records.
func (m *Metrics) observe(store core.Store, now time.Time) error {
	volumes, err := store.Volumes()
	if err != nil {
		return err
	}
	pairings, err := store.Pairings()
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	byState := map[chain.State]int{chain.Active: 0, chain.Demoted: 0, chain.Tombstone: 0}
	for _, v := range volumes {
		byState[v.State]++
	}
	for state, n := range byState {
		m.volumes.WithLabelValues(state.String()).Set(float64(n))
	}
	byPhase := map[replication.Phase]int{replication.Idle: 0, replication.Snapshotting: 0, replication.Shipping: 0, replication.Paused: 0}
	m.lastSyncAge.Reset() // pairings that went away leave no series behind
	for _, p := range pairings {
		byPhase[p.Phase]++
		if !p.Last.At.IsZero() {
			m.lastSyncAge.WithLabelValues(p.Source.String(), string(p.Target)).Set(now.Sub(p.Last.At).Seconds())
		}
	}
	for phase, n := range byPhase {
		m.pairings.WithLabelValues(phase.String()).Set(float64(n))
	}
	return nil
}

// shipped counts one completed shipment.
func (m *Metrics) shipped(p core.Pairing) {
	m.shippedBytes.Add(float64(p.Last.Bytes))
	m.shipments.Inc()
}
