// Package layering holds no code. Its test checks the import graph's rules
// that keep the packages at the bottom small: which packages must not link
// the AWS SDK, the baseline model server or any other benchline package.
// See docs/ARCHITECTURE.md, "Small packages at the bottom".
package layering
