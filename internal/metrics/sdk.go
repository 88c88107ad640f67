package metrics

import (
	"io"
	"log/slog"
	"time"

	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
)

// SDKHandler returns a Temporal client metrics handler that reports the
// SDK's own metrics (temporal_request_total, temporal_activity_execution_latency_seconds,
// temporal_worker_task_slots_available, …) into m's registry, through
// tally's Prometheus reporter, flushed every second. Timers are histograms.
// A metric whose tags clash with one already registered is logged and
// dropped, never a panic. Close the closer when the client is closed.
func (m *Metrics) SDKHandler(logger *slog.Logger) (client.MetricsHandler, io.Closer) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := tallyprom.NewReporter(tallyprom.Options{
		Registerer:       m.reg,
		DefaultTimerType: tallyprom.HistogramTimerType,
		OnRegisterError: func(err error) {
			logger.Warn("metrics: a Temporal SDK metric was not registered", "error", err)
		},
	})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  r,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sdktally.PrometheusSanitizeOptions,
	}, time.Second)
	return sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope)), closer
}
