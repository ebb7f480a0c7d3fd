package daemon

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/baton-dr/baton/node/stream"
)

// metrics are the daemon's Prometheus metrics. A nil *metrics records
// nothing.
type metrics struct {
	passes      *prometheus.CounterVec
	passSeconds prometheus.Histogram
	problems    prometheus.Gauge
	volumes     prometheus.Gauge
	sends       *prometheus.CounterVec
	sentBytes   prometheus.Counter
	streams     *streamCollector
}

// Outcomes of a pass, the values of the passes counter's result label.
const (
	passReconciled   = "reconciled"
	passSpecFailed   = "spec_failed"
	passReportFailed = "report_failed"
)

func newMetrics(registry prometheus.Registerer, client *stream.Client, server *stream.Server) (*metrics, error) {
	m := &metrics{
		passes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baton_node_passes_total",
			Help: "Passes of the node agent's loop, by outcome: reconciled (and reported), spec_failed (the storage API was not reached; nothing changed), report_failed."},
			[]string{"result"}),
		passSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "baton_node_pass_duration_seconds",
			Help:    "Duration of one pass: Spec, Reconcile and Report.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 12)}),
		problems: prometheus.NewGauge(prometheus.GaugeOpts{Name: "baton_node_reconcile_errors",
			Help: "What the last reconciled pass could not do (errors reported to the site)."}),
		volumes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "baton_node_volumes",
			Help: "Volumes in the node's last spec."}),
		sends: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baton_node_sends_total",
			Help: "Snapshot sends finished and reported, by result (ok, failed)."}, []string{"result"}),
		sentBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "baton_node_sent_bytes_total",
			Help: "Stream bytes of the finished sends reported."}),
		streams: &streamCollector{client: client, server: server},
	}
	for _, result := range []string{passReconciled, passSpecFailed, passReportFailed} {
		m.passes.WithLabelValues(result)
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.passes, m.passSeconds, m.problems, m.volumes, m.sends, m.sentBytes, m.streams} {
		errs = append(errs, registry.Register(c))
	}
	return m, errors.Join(errs...)
}

func (m *metrics) observe(r PassResult) {
	if m == nil {
		return
	}
	m.passSeconds.Observe(r.Duration.Seconds())
	switch {
	case !r.Reconciled:
		m.passes.WithLabelValues(passSpecFailed).Inc()
		return
	case r.Reported:
		m.passes.WithLabelValues(passReconciled).Inc()
	default:
		m.passes.WithLabelValues(passReportFailed).Inc()
	}
	m.problems.Set(float64(len(r.Problems)))
	m.volumes.Set(float64(r.Volumes))
	if !r.Reported {
		return // the next report carries these sends: count them then
	}
	for _, s := range r.Sent {
		result := "ok"
		if s.Error != "" {
			result = "failed"
		}
		m.sends.WithLabelValues(result).Inc()
		m.sentBytes.Add(float64(s.Bytes))
	}
}

// streamCollector reads the stream client's and server's counters at every
// scrape: direction "send" is this node shipping, "receive" is peers
// shipping to it.
type streamCollector struct {
	client *stream.Client
	server *stream.Server
}

var (
	streamsDesc = prometheus.NewDesc("baton_node_streams_total",
		"Snapshot streams begun, by direction (send, receive).", []string{"direction"}, nil)
	streamBytesDesc = prometheus.NewDesc("baton_node_stream_bytes_total",
		"Stream body bytes carried, running streams included, by direction.", []string{"direction"}, nil)
	streamsInFlightDesc = prometheus.NewDesc("baton_node_streams_in_flight",
		"Streams running now, by direction.", []string{"direction"}, nil)
	streamAnswersDesc = prometheus.NewDesc("baton_node_stream_answers_total",
		"Finished streams by the receiver's answer (ok, no-base, unauthorized, ...), by direction.", []string{"direction", "answer"}, nil)
	streamTransportErrorsDesc = prometheus.NewDesc("baton_node_stream_transport_errors_total",
		"Streams that ended without an answer (unreachable, handshake refused, connection cut), by direction.", []string{"direction"}, nil)
	streamBusySecondsDesc = prometheus.NewDesc("baton_node_stream_busy_seconds_total",
		"Summed durations of finished streams, by direction: finished bytes over it is the throughput.", []string{"direction"}, nil)
	streamFinishedBytesDesc = prometheus.NewDesc("baton_node_stream_finished_bytes_total",
		"Body bytes of finished streams, by direction.", []string{"direction"}, nil)
)

func (c *streamCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{streamsDesc, streamBytesDesc, streamsInFlightDesc, streamAnswersDesc,
		streamTransportErrorsDesc, streamBusySecondsDesc, streamFinishedBytesDesc} {
		ch <- d
	}
}

func (c *streamCollector) Collect(ch chan<- prometheus.Metric) {
	if c.client != nil {
		collectStats(ch, "send", c.client.Counters().Stats())
	}
	if c.server != nil {
		collectStats(ch, "receive", c.server.Counters().Stats())
	}
}

func collectStats(ch chan<- prometheus.Metric, direction string, s stream.Stats) {
	ch <- prometheus.MustNewConstMetric(streamsDesc, prometheus.CounterValue, float64(s.Streams), direction)
	ch <- prometheus.MustNewConstMetric(streamBytesDesc, prometheus.CounterValue, float64(s.Bytes), direction)
	ch <- prometheus.MustNewConstMetric(streamsInFlightDesc, prometheus.GaugeValue, float64(s.InFlight), direction)
	ch <- prometheus.MustNewConstMetric(streamTransportErrorsDesc, prometheus.CounterValue, float64(s.TransportErrors), direction)
	ch <- prometheus.MustNewConstMetric(streamBusySecondsDesc, prometheus.CounterValue, s.Busy.Seconds(), direction)
	ch <- prometheus.MustNewConstMetric(streamFinishedBytesDesc, prometheus.CounterValue, float64(s.FinishedBytes), direction)
	for kind, n := range s.Answers {
		ch <- prometheus.MustNewConstMetric(streamAnswersDesc, prometheus.CounterValue, float64(n), direction, stream.Kind(kind).String())
	}
}
