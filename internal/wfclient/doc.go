// Package wfclient is benchline's workflow client: it starts the build,
// evaluation, publish and leaderboard-refresh workflows with their
// deterministic ids, waits for them, reads a run's status and progress,
// manages refresh schedules, checks model names before a run starts, and
// prints a run's summary. The commands and the demo use it; the workers'
// wiring is internal/app.
package wfclient
