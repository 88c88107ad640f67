package wfclient

import "go.temporal.io/sdk/temporal"

// temporalPriority is the workflow's priority: its key, and the run as the
// fairness key so concurrent runs share workers evenly.
func temporalPriority(key int, run string) temporal.Priority {
	return temporal.Priority{PriorityKey: key, FairnessKey: run}
}
