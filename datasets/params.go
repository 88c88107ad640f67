package datasets

import (
	"fmt"
	"sort"
	"strings"
)

// SplitParams sorts a build's parameters for a builder that takes the
// content parameters of defaults (part of the version id) and the runtime
// settings of runtime (kept out of it), each map giving every name its
// default. It returns the content parameters, and the runtime settings,
// each with every default filled in and given values trimmed of
// surrounding white space. A name in neither map is an *InputError naming
// the known ones.
func SplitParams(params, defaults, runtime map[string]string) (norm, rt map[string]string, err error) {
	norm = make(map[string]string, len(defaults))
	for k, v := range defaults {
		norm[k] = v
	}
	rt = make(map[string]string, len(runtime))
	for k, v := range runtime {
		rt[k] = v
	}
	for k, v := range params {
		v = strings.TrimSpace(v)
		switch {
		case has(runtime, k):
			rt[k] = v
		case has(defaults, k):
			norm[k] = v
		default:
			var names []string
			for n := range defaults {
				names = append(names, n)
			}
			for n := range runtime {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, nil, &InputError{File: "params", Msg: fmt.Sprintf("unknown parameter %q (have %s)", k, strings.Join(names, ", "))}
		}
	}
	return norm, rt, nil
}

func has(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// ParamError is the *InputError of parameter k given value v, saying what
// is wrong with it.
func ParamError(k, v string, format string, args ...any) error {
	return &InputError{File: "params", Msg: fmt.Sprintf("%s=%q: ", k, v) + fmt.Sprintf(format, args...)}
}
