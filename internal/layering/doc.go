// Package layering holds no code. Its test checks the import graph's rules
// that keep the packages at the bottom small: which packages must not link
// the AWS SDK, the baseline model server or any other benchline package;
// that builders and tasks (datasets/..., scorers/...) link neither the
// activities, the workflows, the list of benchmarks nor Temporal; that
// scorers import no datasets package; and that a builder's unit tests link
// none of the engine. See docs/ARCHITECTURE.md, "Small packages at the
// bottom".
package layering
