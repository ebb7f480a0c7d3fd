package command

import (
	"flag"

	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Serving is where a controller-runtime manager serves its Prometheus
// metrics and its /healthz and /readyz; "0" turns either off. The
// binaries that run a manager (baton-controller, baton-hub,
// baton-view-agent) take both as the same two flags.
type Serving struct{ Metrics, Probes string }

// AddFlags registers --metrics-bind-address and --health-probe-bind-address,
// defaulting to s's addresses.
func (s *Serving) AddFlags(flags *flag.FlagSet) {
	flags.StringVar(&s.Metrics, "metrics-bind-address", s.Metrics, `address of the Prometheus metrics endpoint; "0" turns it off`)
	flags.StringVar(&s.Probes, "health-probe-bind-address", s.Probes, `address of /healthz and /readyz; "0" turns them off`)
}

// MetricsOptions are the manager's metrics server options.
func (s Serving) MetricsOptions() metricsserver.Options {
	return metricsserver.Options{BindAddress: s.Metrics}
}

// ProbeAddress is the manager's HealthProbeBindAddress: "" for "0", which
// the manager reads as no probes at all.
func (s Serving) ProbeAddress() string {
	if s.Probes == "0" {
		return ""
	}
	return s.Probes
}
