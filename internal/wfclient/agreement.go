package wfclient

import (
	"fmt"
	"io"
	"strings"

	"github.com/benchline/benchline/internal/judge"
)

// printAgreement writes one line per judge panel of a run: how far its
// judges agreed (docs/judges.md).
func printAgreement(w io.Writer, agreement []judge.Agreement) {
	for _, a := range agreement {
		alpha := a.Note
		if a.Alpha != nil {
			alpha = fmt.Sprintf("%.3f", *a.Alpha)
		}
		if a.Scale != judge.ScaleNominal {
			alpha = "(" + a.Scale + ") " + alpha
		}
		fmt.Fprintf(w, "judges %s [%s]: Krippendorff's alpha %s; unanimous on %d of %d items with two or more labels (%d items, %d samples)\n",
			a.Set, strings.Join(a.Judges, ", "), alpha, a.Unanimous, a.Paired, a.Items, a.Samples)
	}
}
